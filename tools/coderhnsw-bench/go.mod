module github.com/tidemark/tidemark/tools/coderhnsw-bench

go 1.26

require github.com/coder/hnsw v0.6.1

require (
	github.com/chewxy/math32 v1.10.1 // indirect
	github.com/google/renameio v1.0.1 // indirect
	github.com/viterin/partial v1.1.0 // indirect
	github.com/viterin/vek v0.4.2 // indirect
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
	golang.org/x/sys v0.11.0 // indirect
)
