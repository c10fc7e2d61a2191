package cuda

import "testing"

// DeviceLibrary is the driver the external tests open: the emulated one
// TestMain built, or the machine's under -gpu ("", the default); it skips
// the test when there is neither.
func DeviceLibrary(t testing.TB) string {
	t.Helper()
	if *realGPU {
		return ""
	}
	needFake(t)
	return fakeLib
}

// DeviceOptions are the backend options the tests use on that driver.
func DeviceOptions() BackendOptions { return testOptions() }
