// Command s3send measures what sending a file over loopback TCP costs the sender, by way of
// sending it: through a buffer of 32 KiB (net/http's copy), of 1 MiB, or with sendfile(2);
// and what a read of it for its CRC32C or its SHA-256 costs. It prints the wall and CPU
// time of each (see docs/benchmarks.md, S3 sync).
//
//	head -c 1G /dev/urandom >/tmp/f && go run ./bench/s3send /tmp/f
package main

import (
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-receive" {
		receive(os.Args[2])
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: s3send FILE")
		os.Exit(2)
	}
	path := os.Args[1]
	for _, mode := range []string{"crc32c", "sha256"} {
		c, err := run(path, mode, "")
		check(err)
		fmt.Println(c)
	}
	// The receiver is a process of its own, so that its CPU is not counted.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := ln.Addr().String()
	ln.Close()
	self, err := os.Executable()
	check(err)
	recv, err := os.StartProcess(self, []string{self, "-receive", addr}, &os.ProcAttr{Files: []*os.File{nil, os.Stdout, os.Stderr}})
	check(err)
	defer recv.Kill()
	time.Sleep(300 * time.Millisecond)
	for range 2 {
		for _, mode := range []string{"copy 32 KiB", "copy 1 MiB", "sendfile"} {
			c, err := run(path, mode, addr)
			check(err)
			fmt.Println(c)
		}
	}
}

func run(path, mode, addr string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := fi.Size()
	t0, c0 := time.Now(), cpu()
	if mode == "crc32c" || mode == "sha256" {
		err = sum(f, size, mode)
	} else {
		err = send(f, size, mode, addr)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%-12s %d MiB: wall %v, CPU %v", mode, size>>20, time.Since(t0).Round(time.Millisecond), (cpu() - c0).Round(time.Millisecond)), nil
}

// sum reads size bytes of f for their CRC32C or SHA-256.
func sum(f *os.File, size int64, mode string) error {
	buf := make([]byte, 256<<10)
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	var c uint32
	h := sha256.New()
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf, off)
		if mode == "crc32c" {
			c = crc32.Update(c, castagnoli, buf[:n])
		} else {
			h.Write(buf[:n])
		}
		off += int64(n)
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

// send sends size bytes of f to addr: with sendfile(2), or copied through a buffer.
func send(f *os.File, size int64, mode, addr string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if mode == "sendfile" {
		_, err = conn.(*net.TCPConn).ReadFrom(&io.LimitedReader{R: f, N: size})
		return err
	}
	bs := 32 << 10
	if mode == "copy 1 MiB" {
		bs = 1 << 20
	}
	buf := make([]byte, bs)
	for off := int64(0); off < size && err == nil; {
		var n int
		n, err = f.ReadAt(buf, off)
		if n > 0 {
			_, err = conn.Write(buf[:n])
		}
		off += int64(n)
	}
	if err == io.EOF {
		err = nil
	}
	return err
}

func receive(addr string) {
	ln, err := net.Listen("tcp", addr)
	check(err)
	for {
		c, err := ln.Accept()
		check(err)
		io.Copy(io.Discard, c)
		c.Close()
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
