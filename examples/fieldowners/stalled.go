package main

import (
	"context"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// stalledType is the condition type under which manager's Loop reports
// Stalled in this demo.
func stalledType(manager string) string { return "Stalled(" + manager + ")" }

// perLoopStalled gives each of several Loops over one kind its own Stalled
// condition. The Loop always writes the type conditions.Stalled, so two Loops
// over the same objects would share one condition, and the report of one
// would replace the other's (a Loop clears only a Stalled it owns, so
// neither clears the other's). This ConditionWriter renames the condition on
// its way to the store and back.
type perLoopStalled struct {
	inner reconcile.ConditionWriter[string]
	typ   string
}

func newPerLoopStalled(c *cache.Cache[Spec, Status], st *store.Store[Spec, Status], manager string) perLoopStalled {
	return perLoopStalled{inner: reconcile.StoreConditions(c, st), typ: stalledType(manager)}
}

// Conditions shows this Loop's condition as Stalled and hides the others'.
func (p perLoopStalled) Conditions(key string) ([]store.Condition, int64, bool) {
	conds, gen, ok := p.inner.Conditions(key)
	out := make([]store.Condition, 0, len(conds))
	for _, c := range conds {
		switch c.Type {
		case conditions.Stalled:
			continue
		case p.typ:
			c.Type = conditions.Stalled
		}
		out = append(out, c)
	}
	return out, gen, ok
}

// OwnsCondition reports whether manager owns this Loop's condition.
func (p perLoopStalled) OwnsCondition(key, manager, typ string) bool {
	if typ == conditions.Stalled {
		typ = p.typ
	}
	return p.inner.OwnsCondition(key, manager, typ)
}

// WriteCondition writes the Loop's Stalled condition under this Loop's type.
func (p perLoopStalled) WriteCondition(ctx context.Context, key, manager string, c store.Condition) error {
	c.Type = p.typ
	return p.inner.WriteCondition(ctx, key, manager, c)
}
