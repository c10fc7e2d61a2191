package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRunServeSmall(t *testing.T) {
	for _, data := range []string{writeANN(t, 500, 16, 20, 10), DataGaussian} {
		rep, err := RunServe(context.Background(), ServeConfig{Dir: t.TempDir(), Data: data, N: 500, Dim: 24, Clients: []int{1, 4},
			Duration: 2 * time.Second, Requests: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Levels) != 2 || rep.Levels[0].Clients != 1 || rep.Levels[1].Clients != 4 {
			t.Fatalf("levels %+v", rep.Levels)
		}
		for _, lv := range rep.Levels {
			total := 0
			for _, o := range lv.Ops {
				total += o.Count
				if o.Errors != 0 || o.P50 <= 0 || o.P99 < o.P50 || o.PerSecond <= 0 {
					t.Fatalf("%d clients: op %+v", lv.Clients, o)
				}
			}
			if total == 0 || total > 200 {
				t.Fatalf("%d clients: %d requests (bounded by 200): %+v", lv.Clients, total, lv)
			}
		}
		var js bytes.Buffer
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var back struct {
			Dataset string `json:"dataset"`
			Levels  []struct {
				Clients int `json:"clients"`
				Ops     []struct {
					PerS float64 `json:"per_s"`
					P99  float64 `json:"p99_ms"`
				} `json:"ops"`
			} `json:"levels"`
		}
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Dataset != rep.Dataset || len(back.Levels) != 2 || back.Levels[1].Ops[0].PerS <= 0 {
			t.Fatalf("JSON %v: %s", err, js.String())
		}
		var tab bytes.Buffer
		if err := rep.WriteTable(&tab); err != nil || !strings.Contains(tab.String(), "p99 ms") {
			t.Fatalf("table %v: %s", err, tab.String())
		}
	}
	if _, err := RunServe(context.Background(), ServeConfig{Dir: t.TempDir(), Data: DataGaussian, N: 10, Dim: 8, Clients: []int{0}}); err == nil {
		t.Error("0 clients accepted")
	}
}
