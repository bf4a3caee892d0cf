module platform-operator/testenv/argocd-lua

go 1.26.0

// The versions Argo CD's own go.mod pins (argoproj/argo-cd, util/lua): the same interpreter and the
// same JSON bridge decide what our scripts return.
require (
	github.com/yuin/gopher-lua v1.1.2
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427
)
