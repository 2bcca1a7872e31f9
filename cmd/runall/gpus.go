package main

import (
	"context"
	"errors"
)

// runGPUs is a stub until its owner writes it.
func runGPUs(ctx context.Context, a *app, args []string) error {
	return errors.New("gpus: not implemented yet")
}
