package failclass

import (
	"strconv"
	"strings"

	"github.com/runall/runall/internal/lazyre"
)

// Signature is what failures that are alike share: the class, the exit (its code, or its
// signal) and the attempt's error line (ErrorLine) with its numbers, paths and addresses
// taken out, so that the same bug in two trials (other steps, other directories, other
// pointers) reads the same: "crashed exit 1: RuntimeError: simulated crash at step <n>".
func Signature(c Class, a Attempt) string {
	exit := "exit " + strconv.Itoa(a.ExitCode)
	if a.Signal != "" {
		exit = a.Signal
	}
	sig := string(c) + " " + exit
	if line := Generic(ErrorLine(a.Lines)); line != "" {
		sig += ": " + line
	}
	return sig
}

var (
	addrRE   = lazyre.New(`0[xX][0-9a-fA-F]+`)
	pathRE   = lazyre.New(`(?:[A-Za-z0-9_.~-]*/)+[A-Za-z0-9_.-]*`)
	numberRE = lazyre.New(`\b[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\b`)
	hexRE    = lazyre.New(`\b[0-9a-f]{8,}\b`)
)

// Generic is line with its addresses, paths, long hex digests and numbers each replaced by
// a placeholder (<addr>, <path>, <hex>, <n>), and its spaces folded.
func Generic(line string) string {
	line = addrRE.ReplaceAllString(line, "<addr>")
	line = pathRE.ReplaceAllString(line, "<path>")
	line = hexRE.ReplaceAllString(line, "<hex>")
	line = numberRE.ReplaceAllString(line, "<n>")
	return strings.Join(strings.Fields(line), " ")
}
