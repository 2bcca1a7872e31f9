package s3sync

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Integrity without paying twice: every byte runall sends or receives is covered by a
// CRC32C (computed in hardware, SSE4.2 or ARMv8 CRC, at several GB/s), which the server
// verifies for each request and runall verifies after each download. The content SHA-256
// kept in the metadata is for comparing files across machines; it is computed once, in the
// same read as the CRCs.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	sha   string   // hex SHA-256 of the whole content
	crc   uint32   // CRC32C of the whole content
	parts []uint32 // CRC32C of each part, when the upload is multipart
}

// hashBufSize is the read size of the hashing pass: large enough for few system calls,
// small enough that 16 files hashed at once cost little memory.
const hashBufSize = 256 << 10

// sumFile reads the first size bytes of f once and returns their SHA-256 and CRC32C, and
// each partSize part's CRC32C (partSize 0: one part). It stops when ctx ends.
func sumFile(ctx context.Context, f io.ReaderAt, size, partSize int64) (sums, error) {
	if partSize <= 0 {
		partSize = max(size, 1)
	}
	sh := sha256.New()
	var s sums
	buf := make([]byte, hashBufSize)
	for off := int64(0); off < size || (size == 0 && len(s.parts) == 0); off += partSize {
		n := min(partSize, size-off)
		var part uint32
		r := io.NewSectionReader(f, off, n)
		var got int64
		for {
			if err := ctx.Err(); err != nil {
				return sums{}, err
			}
			k, err := r.Read(buf)
			if k > 0 {
				sh.Write(buf[:k])
				part = crc32.Update(part, castagnoli, buf[:k])
				got += int64(k)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return sums{}, err
			}
		}
		if got != n {
			return sums{}, errors.New("the file shrank while it was read")
		}
		s.crc = crcCombine(s.crc, part, n)
		s.parts = append(s.parts, part)
	}
	s.sha = hex.EncodeToString(sh.Sum(nil))
	return s, nil
}

// sumBytes is sumFile for content already in memory, sent in one request.
func sumBytes(b []byte) sums {
	c := crc32.Checksum(b, castagnoli)
	return sums{sha: sha256Hex(b), crc: c, parts: []uint32{c}}
}
