//go:build race

package testwait

func init() { raceEnabled = true }
