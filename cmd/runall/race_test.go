//go:build race

package main_test

// raceEnabled: the tests run under -race, so the binary the end-to-end tests build is too.
const raceEnabled = true
