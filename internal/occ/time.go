package occ

import "time"

// TimeLayout is RFC 3339 UTC with exactly three fractional digits.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t as the wire timestamp.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Millis converts a time to Unix milliseconds, the storage form.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis converts Unix milliseconds to a UTC time.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
