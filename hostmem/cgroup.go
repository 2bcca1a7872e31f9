package hostmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// noLimit is what cgroup v1 shows as the limit when none is set: the largest page-aligned
// signed 64-bit value. Anything at or beyond 2^62 bytes is taken for it.
const noLimit = 1 << 62

// readV1 reads a cgroup v1 memory cgroup: memory.limit_in_bytes (and the smallest limit of
// the cgroup's ancestors, memory.stat's hierarchical_memory_limit), memory.usage_in_bytes,
// memory.stat's total_inactive_file, memory.oom_control's oom_kill and memory.failcnt.
func readV1(dir string) (Memory, error) {
	var m Memory
	limit, err := readUint(filepath.Join(dir, "memory.limit_in_bytes"))
	if err != nil {
		return m, err
	}
	usage, err := readUint(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return m, err
	}
	stat, err := readKeyed(filepath.Join(dir, "memory.stat"), " ")
	if err != nil {
		return m, err
	}
	if h, ok := stat["hierarchical_memory_limit"]; ok {
		limit = min(limit, h)
	}
	inactive, ok := stat["total_inactive_file"]
	if !ok {
		inactive = stat["inactive_file"]
	}
	m.Limit, m.Limited = limit, limit < noLimit
	m.Cache = min(inactive, usage)
	m.Used = usage - m.Cache
	m.OOMKills, m.HasOOMKills = readOOMKills(filepath.Join(dir, "memory.oom_control")) // kernels before 4.13 keep no counter
	if n, err := readUint(filepath.Join(dir, "memory.failcnt")); err == nil {
		m.LimitHits = n
	}
	return m, nil
}

// readV2 reads a cgroup v2 cgroup: memory.max (the smallest of the cgroup's and its
// ancestors' up to top), memory.current, memory.stat's inactive_file and memory.events'
// oom_kill.
func readV2(dir, top string) (Memory, error) {
	var m Memory
	usage, err := readUint(filepath.Join(dir, "memory.current"))
	if err != nil {
		return m, err
	}
	limit, err := limitV2(dir, top)
	if err != nil {
		return m, err
	}
	stat, err := readKeyed(filepath.Join(dir, "memory.stat"), " ")
	if err != nil {
		return m, err
	}
	m.Limit, m.Limited = limit, limit < noLimit
	m.Cache = min(stat["inactive_file"], usage)
	m.Used = usage - m.Cache
	m.OOMKills, m.HasOOMKills = readOOMKills(filepath.Join(dir, "memory.events"))
	return m, nil
}

// limitV2 is the smallest memory.max from dir up to top: a parent's limit binds its
// children. The root cgroup has no memory.max; "max" is no limit.
func limitV2(dir, top string) (uint64, error) {
	limit := uint64(noLimit)
	found := false
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "memory.max"))
		switch {
		case err == nil:
			found = true
			if s := strings.TrimSpace(string(b)); s != "max" {
				n, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s: want a number of bytes or max, got %q", filepath.Join(d, "memory.max"), s)
				}
				limit = min(limit, n)
			}
		case !os.IsNotExist(err):
			return 0, err
		}
		if top == "" || d == top || !strings.HasPrefix(d, top) || d == filepath.Dir(d) {
			break
		}
	}
	if !found {
		// The hierarchy's root: no limit here, the machine's memory is what there is.
		if _, err := os.Stat(filepath.Join(dir, "memory.current")); err != nil {
			return 0, err
		}
	}
	return limit, nil
}

// readOOMKills reads the oom_kill counter of a cgroup's memory.events (v2) or
// memory.oom_control (v1); ok is false where the file or the counter is missing.
func readOOMKills(path string) (n uint64, ok bool) {
	kv, err := readKeyed(path, " ")
	if err != nil {
		return 0, false
	}
	n, ok = kv["oom_kill"]
	return n, ok
}

// readUint reads a file holding one number.
func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: want a number of bytes, got %q", path, strings.TrimSpace(string(b)))
	}
	return n, nil
}

// readKeyed reads a file of "key<sep>value" lines, keeping those whose value starts with a
// number: the cgroup's "key value" files (memory.stat, memory.events, memory.oom_control;
// sep " ") and procfs's "Key:   value kB" ones (meminfo, smaps_rollup, status; sep ":").
func readKeyed(path, sep string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), sep)
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			out[k] = n
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
