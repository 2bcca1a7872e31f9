package main

import (
	"context"
	_ "embed"
	"os"
	"path/filepath"
	"slices"
)

//go:embed demo.yml
var demoFile []byte

// runDemo runs the embedded demo on two simulated 32 GiB GPUs, unless told otherwise: the
// quickest way to see what runall is for, on a laptop.
func runDemo(ctx context.Context, a *app, args []string) error {
	dir, err := os.MkdirTemp("", "runall-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "demo.yml")
	if err := os.WriteFile(file, demoFile, 0o644); err != nil {
		return err
	}
	if !slices.ContainsFunc(args, func(s string) bool { return s == "--fake-gpus" || s == "-fake-gpus" }) &&
		a.getenv("RUNALL_FAKE_GPUS") == "" {
		args = append([]string{"--fake-gpus", "32GiB,32GiB"}, args...)
	}
	return runRun(ctx, a, append(args, file))
}
