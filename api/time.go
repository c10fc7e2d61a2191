package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Time is a time on the wire: written as RFC 3339 with the fraction it
// has; read as RFC 3339, or as a date, YYYY-MM-DD, meaning midnight UTC
// (so {"as_of": "2025-03-01"} asks about the start of that day).
type Time struct{ time.Time }

// At is t on the wire (nil for the zero time, which means absent).
func At(t time.Time) *Time {
	if t.IsZero() {
		return nil
	}
	return &Time{t}
}

// Get is t's time, the zero time for nil.
func (t *Time) Get() time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// TimeError is a string that is no time.
type TimeError struct{ Value string }

func (e *TimeError) Error() string {
	return fmt.Sprintf("%q is not an RFC 3339 time (2025-03-01T12:00:00Z) or a YYYY-MM-DD date", e.Value)
}

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) { return t.Time.MarshalJSON() }

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want an RFC 3339 time or a YYYY-MM-DD date in a string")
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		t.Time = d
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return &TimeError{Value: s}
	}
	t.Time = v
	return nil
}
