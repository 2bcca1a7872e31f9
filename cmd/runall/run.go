package main

import (
	"context"
	"errors"
)

// runRun is a stub until its owner writes it.
func runRun(ctx context.Context, a *app, args []string) error {
	return errors.New("run: not implemented yet")
}
