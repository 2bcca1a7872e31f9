package main

import (
	"context"
	"errors"
)

// runFakeAlloc is a stub until its owner writes it.
func runFakeAlloc(ctx context.Context, a *app, args []string) error {
	return errors.New("fakealloc: not implemented yet")
}
