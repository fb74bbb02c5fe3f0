// Package metrics registers Prometheus collectors so that parts which share a
// registry share a collector: registering one that is already there answers
// the one registered first, never a second copy and never an error.
//
// It holds no metric of its own and must never register anything by itself.
package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with r and returns it, or the collector already
// registered under the same description when that one is of c's type.
func Register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	err := r.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("metrics: %w", err)
}

// Var is a variable holding a collector, for RegisterAll: make one with VarOf.
type Var interface {
	register(r prometheus.Registerer) error
}

type collectorVar[C prometheus.Collector] struct{ p *C }

func (v collectorVar[C]) register(r prometheus.Registerer) (err error) {
	*v.p, err = Register(r, *v.p)
	return err
}

// VarOf is the Var of the collector that p points to.
func VarOf[C prometheus.Collector](p *C) Var { return collectorVar[C]{p} }

// RegisterAll registers each variable's collector with r in turn, as Register
// does, and leaves in the variable the collector that r holds: the one already
// registered under its description, if any. It stops at the first error and
// returns it.
func RegisterAll(r prometheus.Registerer, vars ...Var) error {
	for _, v := range vars {
		if err := v.register(r); err != nil {
			return err
		}
	}
	return nil
}
