package hostmem

import (
	"errors"
	"fmt"
)

// meminfo is what runall takes from /proc/meminfo.
type meminfo struct {
	total, available uint64
}

// readMeminfo reads MemTotal and MemAvailable (kB in the file).
func readMeminfo(path string) (meminfo, error) {
	if path == "" {
		return meminfo{}, errors.New("no meminfo file")
	}
	kv, err := readKeyed(path, ":")
	if err != nil {
		return meminfo{}, err
	}
	total, ok1 := kv["MemTotal"]
	avail, ok2 := kv["MemAvailable"] // since Linux 3.14
	if !ok1 || !ok2 || total == 0 {
		return meminfo{}, fmt.Errorf("%s: no MemTotal and MemAvailable", path)
	}
	return meminfo{total: total << 10, available: min(avail<<10, total<<10)}, nil
}

// memory is the machine's memory as a Memory: no limit but its total.
func (i meminfo) memory() Memory {
	return Memory{Limit: i.total, Used: i.total - i.available, Available: i.available}
}
