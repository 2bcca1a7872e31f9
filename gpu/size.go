package gpu

import "github.com/runall/runall/size"

// ParseSize reads a memory size such as "7GiB": size.Parse, for gpu's callers.
func ParseSize(s string) (uint64, error) { return size.Parse(s) }

// FormatSize prints bytes as "7.0 GiB": size.Format, for gpu's callers.
func FormatSize(b uint64) string { return size.Format(b) }
