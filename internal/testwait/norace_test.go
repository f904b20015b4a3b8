package testwait_test

// raceEnabled is set when the tests are built with -race (race_test.go).
var raceEnabled bool
