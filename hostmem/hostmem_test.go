package hostmem

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const gib = 1 << 30

// write lays out files under dir: name → content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// meminfoFile is a machine with 16 GiB, 12 GiB of them available.
const meminfoFile = "MemTotal:       16777216 kB\nMemFree:         1000000 kB\nMemAvailable:   12582912 kB\nBuffers:           1 kB\n"

func TestCgroupV1(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  Memory
	}{
		{
			name: "limited, cache left out, oom kills counted",
			files: map[string]string{
				"memory.limit_in_bytes": "2147483648\n",
				"memory.usage_in_bytes": "1610612736\n",
				"memory.stat":           "cache 600000000\nrss 1000000000\ninactive_file 1\nhierarchical_memory_limit 9223372036854771712\ntotal_inactive_file 536870912\n",
				"memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
				"memory.failcnt":        "159\n",
			},
			want: Memory{Limit: 2 * gib, Limited: true, Used: gib, Cache: gib / 2, Available: 12 * gib, OOMKills: 3, HasOOMKills: true, LimitHits: 159},
		},
		{
			name: "a parent's smaller limit binds",
			files: map[string]string{
				"memory.limit_in_bytes": "9223372036854771712\n",
				"memory.usage_in_bytes": "104857600\n",
				"memory.stat":           "hierarchical_memory_limit 1073741824\ntotal_inactive_file 0\n",
				"memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\n",
			},
			want: Memory{Limit: gib, Limited: true, Used: 100 << 20, Available: 12 * gib},
		},
		{
			name: "no limit: the machine's memory",
			files: map[string]string{
				"memory.limit_in_bytes": "9223372036854771712\n",
				"memory.usage_in_bytes": "3221225472\n",
				"memory.stat":           "total_inactive_file 1073741824\n",
				"memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
			},
			want: Memory{Limit: 16 * gib, Used: 2 * gib, Cache: gib, Available: 12 * gib, HasOOMKills: true},
		},
		{
			name: "a limit beyond the machine is none",
			files: map[string]string{
				"memory.limit_in_bytes": "34359738368\n",
				"memory.usage_in_bytes": "1073741824\n",
				"memory.stat":           "total_inactive_file 0\n",
			},
			want: Memory{Limit: 16 * gib, Used: gib, Available: 12 * gib},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			write(t, dir, map[string]string{"meminfo": meminfoFile})
			p := NewCgroupV1(dir, filepath.Join(dir, "meminfo"))
			got, err := p.Read()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Read() = %+v, want %+v", got, c.want)
			}
			if n, ok := p.OOMKills(); n != c.want.OOMKills || ok != c.want.HasOOMKills {
				t.Errorf("OOMKills() = %d, %v; want %d, %v", n, ok, c.want.OOMKills, c.want.HasOOMKills)
			}
		})
	}
}

func TestCgroupV2(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // under the mount point; the cgroup is kubepods/pod/ctr
		want  Memory
	}{
		{
			name: "own limit",
			files: map[string]string{
				"kubepods/pod/ctr/memory.max":     "2147483648\n",
				"kubepods/pod/ctr/memory.current": "1342177280\n",
				"kubepods/pod/ctr/memory.stat":    "anon 1000\nfile 400000000\nactive_file 1\ninactive_file 268435456\n",
				"kubepods/pod/ctr/memory.events":  "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n",
			},
			want: Memory{Limit: 2 * gib, Limited: true, Used: gib, Cache: 256 << 20, Available: 12 * gib, OOMKills: 2, HasOOMKills: true},
		},
		{
			name: "the Pod's limit binds its container",
			files: map[string]string{
				"kubepods/memory.max":             "max\n",
				"kubepods/pod/memory.max":         "1073741824\n",
				"kubepods/pod/ctr/memory.max":     "max\n",
				"kubepods/pod/ctr/memory.current": "536870912\n",
				"kubepods/pod/ctr/memory.stat":    "inactive_file 0\n",
				"kubepods/pod/ctr/memory.events":  "oom_kill 0\n",
			},
			want: Memory{Limit: gib, Limited: true, Used: gib / 2, Available: 12 * gib, HasOOMKills: true},
		},
		{
			name: "no limit anywhere",
			files: map[string]string{
				"kubepods/pod/ctr/memory.max":     "max\n",
				"kubepods/pod/ctr/memory.current": "536870912\n",
				"kubepods/pod/ctr/memory.stat":    "inactive_file 0\n",
			},
			want: Memory{Limit: 16 * gib, Used: gib / 2, Available: 12 * gib},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			write(t, top, c.files)
			info := filepath.Join(t.TempDir(), "meminfo")
			write(t, filepath.Dir(info), map[string]string{"meminfo": meminfoFile})
			p := NewCgroupV2(filepath.Join(top, "kubepods/pod/ctr"), top, info)
			got, err := p.Read()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Read() = %+v, want %+v", got, c.want)
			}
			if n, ok := p.OOMKills(); n != c.want.OOMKills || ok != c.want.HasOOMKills {
				t.Errorf("OOMKills() = %d, %v; want %d, %v", n, ok, c.want.OOMKills, c.want.HasOOMKills)
			}
		})
	}
}

func TestMeminfo(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"meminfo": meminfoFile})
	got, err := NewMeminfo(filepath.Join(dir, "meminfo")).Read()
	if err != nil {
		t.Fatal(err)
	}
	want := Memory{Limit: 16 * gib, Used: 4 * gib, Available: 12 * gib}
	if n, ok := NewMeminfo(filepath.Join(dir, "meminfo")).OOMKills(); n != 0 || ok {
		t.Errorf("OOMKills() = %d, %v without a cgroup; want 0, false", n, ok)
	}
	if got != want || got.Room() != 12*gib {
		t.Errorf("Read() = %+v (room %d), want %+v", got, got.Room(), want)
	}
}

// TestUnreadable: a cgroup whose files are missing or hold no number is an error that says
// which file, never a zero limit taken for real.
func TestUnreadable(t *testing.T) {
	cases := []struct {
		name  string
		probe func(dir string) *Probe
		files map[string]string
		want  string
	}{
		{"v1 missing usage", func(d string) *Probe { return NewCgroupV1(d, "") },
			map[string]string{"memory.limit_in_bytes": "1073741824\n"}, "memory.usage_in_bytes"},
		{"v1 garbage limit", func(d string) *Probe { return NewCgroupV1(d, "") },
			map[string]string{"memory.limit_in_bytes": "lots\n", "memory.usage_in_bytes": "1\n", "memory.stat": ""}, `got "lots"`},
		{"v2 garbage max", func(d string) *Probe { return NewCgroupV2(d, d, "") },
			map[string]string{"memory.max": "12x\n", "memory.current": "1\n", "memory.stat": ""}, "want a number of bytes or max"},
		{"v2 no limit and no meminfo", func(d string) *Probe { return NewCgroupV2(d, d, filepath.Join(d, "nope")) },
			map[string]string{"memory.max": "max\n", "memory.current": "1\n", "memory.stat": ""}, "sets no limit"},
		{"meminfo without MemAvailable", func(d string) *Probe { return NewMeminfo(filepath.Join(d, "meminfo")) },
			map[string]string{"meminfo": "MemTotal: 100 kB\n"}, "no MemTotal and MemAvailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			_, err := c.probe(dir).Read()
			if err == nil || !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Read() error = %v, want one wrapping ErrUnreadable that says %q", err, c.want)
			}
		})
	}
}

func TestRoom(t *testing.T) {
	cases := []struct {
		m    Memory
		want uint64
	}{
		{Memory{Limit: 2 * gib, Used: gib / 2}, 3 * gib / 2},
		{Memory{Limit: 2 * gib, Used: 3 * gib}, 0},
		{Memory{Limit: 2 * gib, Used: gib / 2, Available: gib}, gib}, // the node is shorter than the limit
	}
	for _, c := range cases {
		if got := c.m.Room(); got != c.want {
			t.Errorf("%+v.Room() = %d, want %d", c.m, got, c.want)
		}
	}
}

// TestOpen lays out a procfs (mountinfo, cgroup, meminfo) and the hierarchies it names.
func TestOpen(t *testing.T) {
	v1files := map[string]string{
		"memory.limit_in_bytes": "1073741824\n", "memory.usage_in_bytes": "1\n", "memory.stat": "",
	}
	v2files := map[string]string{"memory.max": "1073741824\n", "memory.current": "1\n", "memory.stat": ""}
	cases := []struct {
		name      string
		mountinfo string // %s is the fake root
		cgroup    string
		layout    map[string]map[string]string // directory under the fake root → its files
		wantKind  Kind
		wantDir   string // under the fake root
	}{
		{
			name: "v1, the host's hierarchy mounted (no cgroup namespace)",
			mountinfo: "30 25 0:26 / %s/sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n" +
				"31 25 0:27 / %s/sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
			cgroup:   "4:memory:/kubepods/pod1/ctr\n0::/\n",
			layout:   map[string]map[string]string{"sys/fs/cgroup/memory/kubepods/pod1/ctr": v1files},
			wantKind: CgroupV1, wantDir: "sys/fs/cgroup/memory/kubepods/pod1/ctr",
		},
		{
			name:      "v1, the container's own cgroup mounted as the root (docker)",
			mountinfo: "30 25 0:26 /docker/abc %s/sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
			cgroup:    "7:memory:/docker/abc\n",
			layout:    map[string]map[string]string{"sys/fs/cgroup/memory": v1files},
			wantKind:  CgroupV1, wantDir: "sys/fs/cgroup/memory",
		},
		{
			name:      "v2 with a cgroup namespace",
			mountinfo: "40 25 0:30 / %s/sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
			cgroup:    "0::/\n",
			layout:    map[string]map[string]string{"sys/fs/cgroup": v2files},
			wantKind:  CgroupV2, wantDir: "sys/fs/cgroup",
		},
		{
			name:      "v2, a path beneath the mount",
			mountinfo: "40 25 0:30 / %s/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			cgroup:    "0::/kubepods.slice/pod.slice/cri-abc.scope\n",
			layout:    map[string]map[string]string{"sys/fs/cgroup/kubepods.slice/pod.slice/cri-abc.scope": v2files},
			wantKind:  CgroupV2, wantDir: "sys/fs/cgroup/kubepods.slice/pod.slice/cri-abc.scope",
		},
		{
			name:      "v2 without the memory controller: the machine's meminfo",
			mountinfo: "40 25 0:30 / %s/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			cgroup:    "0::/\n",
			layout:    map[string]map[string]string{"sys/fs/cgroup": {"cgroup.procs": ""}},
			wantKind:  Meminfo,
		},
		{
			name:     "no cgroups mounted",
			wantKind: Meminfo,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for dir, files := range c.layout {
				write(t, filepath.Join(root, dir), files)
			}
			write(t, root, map[string]string{
				"proc/self/mountinfo": strings.ReplaceAll(c.mountinfo, "%s", root),
				"proc/self/cgroup":    c.cgroup,
				"proc/meminfo":        meminfoFile,
			})
			p := Open(filepath.Join(root, "proc"))
			if p.Kind() != c.wantKind {
				t.Fatalf("Open() is %v (%s), want %v", p.Kind(), p, c.wantKind)
			}
			if c.wantDir != "" && p.Dir() != filepath.Join(root, c.wantDir) {
				t.Errorf("Open() reads %s, want %s", p.Dir(), filepath.Join(root, c.wantDir))
			}
			if _, err := p.Read(); err != nil {
				t.Errorf("Read() = %v", err)
			}
		})
	}
}

// TestOpenHere reads this machine's memory: whatever it finds, the figures are consistent.
func TestOpenHere(t *testing.T) {
	p := Open("")
	m, err := p.Read()
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if m.Limit == 0 || m.Used > m.Limit*2 || m.Room() > m.Limit {
		t.Errorf("%s: implausible %+v", p, m)
	}
	t.Logf("%s: %+v", p, m)
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/with\040space\134x`); got != `/mnt/with space\x` {
		t.Errorf("unescapeMount = %q", got)
	}
}
