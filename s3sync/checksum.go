package s3sync

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Integrity without paying twice: every byte runall sends or receives is covered by a
// CRC32C (computed in hardware, SSE4.2 or ARMv8 CRC, at several GB/s), which the server
// verifies for each request and runall verifies after each download. The content CRC32C
// kept in the metadata (and, for files under smallFile, the SHA-256) is for comparing files
// across machines; it is computed once, in the same read as the parts' CRCs.

// castagnoli is CRC32C's table, made on first use: a run that never syncs does not build it.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// metaCRC32C is the user-metadata key (x-amz-meta-runall-crc32c) holding the content's
// CRC32C, hex: a download checks what it wrote against it.
const metaCRC32C = "runall-crc32c"

func crcHex(c uint32) string { return fmt.Sprintf("%08x", c) }

// crcBase64 is a CRC32C as S3's x-amz-checksum-crc32c header carries it.
func crcBase64(c uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], c)
	return base64.StdEncoding.EncodeToString(b[:])
}

// crcFromMetadata returns the content CRC32C that runall stored, and whether there is one.
func crcFromMetadata(m map[string]string) (uint32, bool) {
	v := m[metaCRC32C]
	if len(v) != 8 {
		return 0, false
	}
	b, err := hex.DecodeString(v)
	if err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint32(b), true
}

// crcCombine returns the CRC32C of A followed by B from crcA, crcB and B's length, as
// zlib's crc32_combine does: ranges downloaded out of order are checked as one object.
func crcCombine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	// Apply lenB zero bytes to crcA with the matrix of one zero bit, squared repeatedly
	// (the operator for 1, 2, 4, ... zero bytes), then add crcB.
	var even, odd [32]uint32
	odd[0] = crc32.Castagnoli // the reflected polynomial: the operator for one zero bit
	row := uint32(1)
	for i := 1; i < 32; i++ {
		odd[i] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		gf2Square(&even, &odd) // one zero byte, then 4, 16, ...
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}

// sums is what one read of a file tells before its upload.
type sums struct {
	sha   string   // hex SHA-256 of the whole content; "" for a file read from disk (see sumFile)
	crc   uint32   // CRC32C of the whole content
	parts []uint32 // CRC32C of each part, when the upload is multipart
}

// hashBufSize is the read size of the hashing pass: large enough for few system calls,
// small enough that 16 files hashed at once cost little memory.
const hashBufSize = 256 << 10

var hashBufs = sync.Pool{New: func() any { b := make([]byte, hashBufSize); return &b }}

// sumFile reads the first size bytes of f once and returns their CRC32C and each
// partSize part's (partSize 0: one part), reading parts in parallel, one per core. It
// stops when ctx ends.
//
// No SHA-256: this read comes before the first byte is sent (S3 takes an object's metadata
// when its upload begins), and a SHA-256 of every byte cost 3 times the CRC32C's CPU, on
// cores that the server shares on an in-cluster MinIO. The CRC32C identifies the content
// for comparisons across machines (see docs/s3.md).
func sumFile(ctx context.Context, f io.ReaderAt, size, partSize int64) (sums, error) {
	if partSize <= 0 {
		partSize = max(size, 1)
	}
	n := max(1, (size+partSize-1)/partSize)
	s := sums{parts: make([]uint32, n)}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		off := i * partSize
		g.Go(func() error {
			c, err := crcSection(gctx, f, off, min(partSize, size-off))
			s.parts[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return sums{}, err
	}
	for i, c := range s.parts {
		s.crc = crcCombine(s.crc, c, min(partSize, size-int64(i)*partSize))
	}
	return s, nil
}

// crcSection returns the CRC32C of the n bytes of f at off.
func crcSection(ctx context.Context, f io.ReaderAt, off, n int64) (uint32, error) {
	bufp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bufp)
	buf := *bufp
	var c uint32
	var got int64
	r := io.NewSectionReader(f, off, n)
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := r.Read(buf)
		if k > 0 {
			c = crc32.Update(c, castagnoli(), buf[:k])
			got += int64(k)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if got != n {
		return 0, errors.New("the file shrank while it was read")
	}
	return c, nil
}

// sumBytes is sumFile for content already in memory, sent in one request; at this size
// (under smallFile) the SHA-256 costs little and stays in the metadata.
func sumBytes(b []byte) sums {
	c := crc32.Checksum(b, castagnoli())
	return sums{sha: sha256Hex(b), crc: c, parts: []uint32{c}}
}
