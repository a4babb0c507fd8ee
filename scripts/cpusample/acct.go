package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
)

// The kernel's process accounting (acct(2), turned on by accton from
// Debian's acct) writes one record for every process when it ends, its
// CPU time whole: unlike the sampler, it misses no short-lived process.
// summarizeAcct reads such a file (struct acct_v3 records, linux/acct.h)
// and prints the commands by CPU seconds, largest first, with how many
// processes of each ended.
func summarizeAcct(file string, top int) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	const recordSize = 64
	type total struct {
		cpu   float64
		count int
	}
	byName := map[string]*total{}
	sum := 0.0
	for off := 0; off+recordSize <= len(b); off += recordSize {
		r := b[off : off+recordSize]
		if r[1]&0x0f != 3 { // ac_version: only v3 records are written on Linux
			return fmt.Errorf("%s: record %d is not an acct_v3 record (version %d)", file, off/recordSize, r[1])
		}
		cpu := (compT(binary.LittleEndian.Uint16(r[32:])) + compT(binary.LittleEndian.Uint16(r[34:]))) / clockTicks
		name := string(bytes.TrimRight(r[48:64], "\x00"))
		t := byName[name]
		if t == nil {
			t = &total{}
			byName[name] = t
		}
		t.cpu += cpu
		t.count++
		sum += cpu
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(byName[b].cpu, byName[a].cpu) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%.0f CPU s in %d processes that ended\n", sum, len(b)/recordSize)
	for i, n := range names {
		if i == top {
			break
		}
		fmt.Fprintf(&sb, "%8.1f\t%6d\t%s\n", byName[n].cpu, byName[n].count, n)
	}
	_, err = os.Stdout.WriteString(sb.String())
	return err
}

// compT decodes a comp_t: a 13-bit mantissa and a 3-bit base-8 exponent.
func compT(v uint16) float64 {
	return float64(uint64(v&0x1fff) << (3 * uint(v>>13)))
}
