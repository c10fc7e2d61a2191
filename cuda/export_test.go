package cuda

import "testing"

// FakeLibrary is the emulated driver TestMain built, for the external
// tests; it skips the test when there is none.
func FakeLibrary(t testing.TB) string {
	t.Helper()
	needFake(t)
	return fakeLib
}
