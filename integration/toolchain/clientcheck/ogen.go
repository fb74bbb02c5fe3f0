//go:build ignore

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ogen-go/ogen/validate"

	"example.com/operator/gamev1"
	"example.com/operator/ogenwiring"
	"example.com/operator/tablev1"
)

const client = "ogen"

func operations() []operation {
	return []operation{
		{doc: "game.v1.yaml", name: "launchGame", answers: gameAnswers, call: func(ctx context.Context, url string, a answer) outcome {
			c, err := ogenwiring.NewGameClient(url, []byte("clientcheck-secret"))
			if err != nil {
				return outcome{what: "client: " + err.Error()}
			}
			res, err := c.LaunchGame(ctx, &gamev1.LaunchRequest{
				Operator: "acme", Timestamp: time.Now().UnixMilli(), GameID: "crash",
				Token: gamev1.NewOptString("tok-live-0123456789abcdef"), PlayerID: gamev1.NewOptString("p-1"),
			})
			return judge(res, err, a)
		}},
		{doc: "table.v1.yaml", name: "getCurrentRound", answers: tableAnswers, call: func(ctx context.Context, url string, a answer) outcome {
			c, err := tablev1.NewClient(url, session{})
			if err != nil {
				return outcome{what: "client: " + err.Error()}
			}
			res, err := c.GetCurrentRound(ctx)
			return judge(res, err, a)
		}},
	}
}

// judge: a value is decoded when it holds the answer's marker; an
// *validate.UnexpectedStatusCodeError carries the status; any other error
// fails.
func judge(res any, err error, a answer) outcome {
	var status *validate.UnexpectedStatusCodeError
	switch {
	case err == nil:
		text := fmt.Sprintf("%+v", res)
		if a.marker != "" && !strings.Contains(text, a.marker) {
			return outcome{what: fmt.Sprintf("decoded as %T without %s", res, a.marker)}
		}
		return outcome{ok: true, decoded: true, what: fmt.Sprintf("decoded as %T", res)}
	case errors.As(err, &status):
		return outcome{ok: true, what: fmt.Sprintf("typed error *validate.UnexpectedStatusCodeError, StatusCode %d", status.StatusCode)}
	}
	return outcome{what: "error: " + err.Error()}
}

// session is the table's SecuritySource: any session will do here.
type session struct{}

func (session) Bearer(context.Context, tablev1.OperationName) (tablev1.Bearer, error) {
	return tablev1.Bearer{Token: "clientcheck-session"}, nil
}
