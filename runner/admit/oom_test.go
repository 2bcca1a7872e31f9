package admit

import "testing"

func TestParseOOM(t *testing.T) {
	for _, tc := range []struct {
		line string
		want uint64
	}{
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB " +
			"of which 1.06 GiB is free. Including non-PyTorch memory, this process has 10.00 GiB memory in use. Of the allocated memory 9.5 GiB is allocated by PyTorch",
			12 * gi},
		{"RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 15.78 GiB total capacity; 12.31 GiB already allocated; " +
			"1.20 GiB free; 13.50 GiB reserved in total by PyTorch)", 14 * gi},
		{"CUDA out of memory. Tried to allocate 3.0 GiB (GPU 0; 20.0 GiB total capacity; 18.0 GiB already allocated by other processes; " +
			"5.0 GiB already allocated by this process)", 8 * gi},
		{"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.", 16 * gi},
		{"ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024,1024]", 0},
		{"CUDA out of memory. Tried to allocate 1.00 GiB", gi}, // tried only: held unknown
		{"epoch 3 loss 0.1", 0},
	} {
		if o := ParseOOM(tc.line); o.Held+o.Tried != tc.want {
			t.Errorf("ParseOOM(%.60q...) = %+v, want %d MiB in all", tc.line, o, tc.want>>20)
		}
	}
}
