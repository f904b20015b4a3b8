//go:build race

package testwait_test

func init() { raceEnabled = true }
