//go:build !amd64 || noasm

package peak

func loops() []loop { return []loop{goScalar} }

const readName = "go streaming sum"

func sum(v []float32) float32 { return sumGeneric(v) }
