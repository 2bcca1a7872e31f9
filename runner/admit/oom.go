package admit

import "regexp"

// oomPatterns are what frameworks print when the GPU runs out of memory.
var oomPatterns = regexp.MustCompile(`CUDA out of memory|OutOfMemoryError|OOM when allocating|` +
	`ran out of memory trying to allocate|RESOURCE_EXHAUSTED: Out of memory|CUDA_ERROR_OUT_OF_MEMORY|` +
	`CUBLAS_STATUS_ALLOC_FAILED|CUDA error: out of memory`)

// IsOOM reports whether a line of a trial's output says the GPU ran out of memory.
func IsOOM(line string) bool { return oomPatterns.MatchString(line) }
