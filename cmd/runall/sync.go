package main

import (
	"context"
	"errors"
)

// runSync is a stub until its owner writes it.
func runSync(ctx context.Context, a *app, args []string) error {
	return errors.New("sync: not implemented yet")
}
