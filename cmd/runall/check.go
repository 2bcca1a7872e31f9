package main

import (
	"context"
	"errors"
)

// runCheck is a stub until its owner writes it.
func runCheck(ctx context.Context, a *app, args []string) error {
	return errors.New("check: not implemented yet")
}
