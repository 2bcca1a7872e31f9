package results

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// GPU memory samples, as runall keeps them in the log directory (gpu-samples.jsonl) for the
// report: JSON lines, a devices line first (again whenever the devices change), then one
// line per kept sample with each device's used memory, in the devices line's order:
//
//	{"devices":[{"uuid":"GPU-5f0c…","name":"Tesla V100-SXM2-32GB","total":34359738368},{"uuid":"container","name":"container","total":68719476736}]}
//	{"t":1718000000250,"used":[1073741824,2147483648]}
//
// t is milliseconds since the Unix epoch. The last device, ContainerDevice, is the
// container's memory where it could be read (a run without GPUs that sets memory: keeps
// it alone).

// SamplesFile is the samples' name in the log directory.
const SamplesFile = "gpu-samples.jsonl"

// ContainerDevice is the device the samples name the container's memory by, beside the
// GPUs: its use less the page cache the kernel reclaims first, against its limit (hostmem).
const ContainerDevice = "container"

// SampleDevice is one GPU of a samples file.
type SampleDevice struct {
	UUID  string `json:"uuid"`
	Name  string `json:"name,omitempty"`
	Total uint64 `json:"total"`
}

// GPUSample is the used memory of every device at one time.
type GPUSample struct {
	Time time.Time
	Used map[string]uint64 // by device UUID
}

// GPUSamples is what a samples file holds.
type GPUSamples struct {
	Devices   []SampleDevice
	Samples   []GPUSample
	Truncated bool // the writer stopped at its size limit
}

type sampleLine struct {
	Devices   []SampleDevice `json:"devices,omitempty"`
	T         int64          `json:"t,omitempty"`
	Used      []uint64       `json:"used,omitempty"`
	Truncated bool           `json:"truncated,omitempty"`
}

// ReadSamples reads a samples file. A last line cut short (a run killed while writing) is
// left out; any other line that cannot be read is an error.
func ReadSamples(r io.Reader) (*GPUSamples, error) {
	out := &GPUSamples{}
	var devs []SampleDevice
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var pending error // a bad line is an error only when another follows
	for n := 1; sc.Scan(); n++ {
		if pending != nil {
			return nil, pending
		}
		var l sampleLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			pending = fmt.Errorf("line %d: %w", n, err)
			continue
		}
		out.add(l, &devs)
	}
	return out, sc.Err()
}

// add keeps one line: a devices line names the devices the samples after it are of.
func (s *GPUSamples) add(l sampleLine, devs *[]SampleDevice) {
	switch {
	case l.Truncated:
		s.Truncated = true
	case l.Devices != nil:
		*devs = l.Devices
		for _, d := range l.Devices {
			if !slices.ContainsFunc(s.Devices, func(o SampleDevice) bool { return o.UUID == d.UUID }) {
				s.Devices = append(s.Devices, d)
			}
		}
	case len(l.Used) > 0:
		smp := GPUSample{Time: time.UnixMilli(l.T), Used: map[string]uint64{}}
		for i, u := range l.Used {
			if i < len(*devs) {
				smp.Used[(*devs)[i].UUID] = u
			}
		}
		s.Samples = append(s.Samples, smp)
	}
}

// SampleFeed reads a samples file while it is written: each Feed takes what was appended
// since the last one, keeping a line not yet whole until the rest of it comes.
type SampleFeed struct {
	samples GPUSamples
	devs    []SampleDevice
	rest    []byte
}

// Feed decodes the whole lines of b. A line that cannot be read is left out, and the first
// such line of b is the error.
func (f *SampleFeed) Feed(b []byte) error {
	var first error
	f.rest = append(f.rest, b...)
	for {
		i := bytes.IndexByte(f.rest, '\n')
		if i < 0 {
			break
		}
		var l sampleLine
		if err := json.Unmarshal(f.rest[:i], &l); err != nil && first == nil {
			first = fmt.Errorf("gpu samples: %w", err)
		} else if err == nil {
			f.samples.add(l, &f.devs)
		}
		f.rest = f.rest[i+1:]
	}
	// What is left is a line's start: keep it alone, not the whole of b; a "line" that long
	// is no samples line (ReadSamples takes lines of at most 1 MiB too).
	f.rest = bytes.Clone(f.rest)
	if len(f.rest) > 1<<20 {
		f.rest = nil
		first = cmp.Or(first, errors.New("gpu samples: a line longer than 1 MiB: left out"))
	}
	return first
}

// Samples is what was read so far. The next Feed adds to it.
func (f *SampleFeed) Samples() *GPUSamples { return &f.samples }

// SampleWriter keeps GPU memory samples compactly: a sample is written when a device's
// memory moved by SampleStep or more since the last one kept, or SampleEvery has passed;
// the file stops growing at SampleLimit bytes (with a last line saying so).
type SampleWriter struct {
	mu        sync.Mutex
	w         io.Writer
	written   int64
	devices   []SampleDevice
	last      []uint64
	lastTime  time.Time
	truncated bool
	err       error
}

const (
	SampleStep  = 64 << 20         // bytes of movement worth a line
	SampleEvery = 5 * time.Second  // a line at least this often
	SampleLimit = 16 << 20         // bytes: about two weeks of a steady 8-GPU run
	sampleFloor = time.Second / 10 // and never more often than this
)

// NewSampleWriter writes samples to w.
func NewSampleWriter(w io.Writer) *SampleWriter { return &SampleWriter{w: w} }

// Add offers one sample: the devices' memory at a time. It keeps it or not as the rules say.
func (sw *SampleWriter) Add(at time.Time, devices []SampleDevice, used []uint64) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.truncated || sw.err != nil || len(devices) == 0 {
		return
	}
	if !slices.Equal(devices, sw.devices) {
		sw.devices = slices.Clone(devices)
		sw.last = nil
		sw.line(sampleLine{Devices: sw.devices})
	}
	if sw.last != nil && !sw.moved(used) && at.Sub(sw.lastTime) < SampleEvery {
		return
	}
	if sw.last != nil && at.Sub(sw.lastTime) < sampleFloor {
		return
	}
	sw.last, sw.lastTime = slices.Clone(used), at
	sw.line(sampleLine{T: at.UnixMilli(), Used: used})
}

func (sw *SampleWriter) moved(used []uint64) bool {
	for i, u := range used {
		if i >= len(sw.last) || max(u, sw.last[i])-min(u, sw.last[i]) >= SampleStep {
			return true
		}
	}
	return false
}

func (sw *SampleWriter) line(l sampleLine) {
	b, _ := json.Marshal(l) // plain numbers and strings: cannot fail
	if sw.written+int64(len(b))+64 > SampleLimit {
		b, _ = json.Marshal(sampleLine{Truncated: true})
		sw.truncated = true
	}
	n, err := sw.w.Write(append(b, '\n'))
	sw.written += int64(n)
	if err != nil {
		sw.err = err
	}
}

// Err is the first error writing.
func (sw *SampleWriter) Err() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.err != nil {
		return fmt.Errorf("gpu samples: %w", sw.err)
	}
	return nil
}
