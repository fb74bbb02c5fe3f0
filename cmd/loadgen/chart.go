package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"strings"
)

// The chart: three panels over the seconds of the run. Top, latency (ms) of
// accepted bets and paid cashouts per second (p99 dark, p50 light). Middle,
// accepted bets and paid cashouts per second. Bottom, the movement queue's
// pending depth. Drawn by hand with the standard library; text in a 3x5 pixel
// font scaled up.

var (
	colBet     = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	colBetLt   = color.RGBA{0xa6, 0xc8, 0xe3, 0xff}
	colCash    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	colCashLt  = color.RGBA{0xf2, 0xa8, 0xa8, 0xff}
	colQueue   = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	colAxis    = color.RGBA{0x33, 0x33, 0x33, 0xff}
	colGrid    = color.RGBA{0xe5, 0xe5, 0xe5, 0xff}
	colBG      = color.RGBA{0xff, 0xff, 0xff, 0xff}
	chartW     = 1200
	panelH     = 260
	marginL    = 90
	marginR    = 20
	marginTop  = 40
	panelSpace = 40
)

type series struct {
	c  color.RGBA
	ys []float64
}

func writeChart(path string, res *result) error {
	n := len(res.Timeline)
	if n == 0 {
		return nil
	}
	h := marginTop + 3*(panelH+panelSpace)
	img := image.NewRGBA(image.Rect(0, 0, chartW, h))
	fill(img, img.Bounds(), colBG)
	col := func(f func(s second) float64) []float64 {
		out := make([]float64, n)
		for i, s := range res.Timeline {
			out[i] = f(s)
		}
		return out
	}
	top := marginTop
	panel(img, top, "LATENCY MS  BET P99 P50  CASHOUT P99 P50", n, []series{
		{colBetLt, col(func(s second) float64 { return s.BetP50 })},
		{colCashLt, col(func(s second) float64 { return s.CashoutP50 })},
		{colBet, col(func(s second) float64 { return s.BetP99 })},
		{colCash, col(func(s second) float64 { return s.CashoutP99 })},
	})
	top += panelH + panelSpace
	panel(img, top, "PER SECOND  BETS ACCEPTED  CASHOUTS PAID", n, []series{
		{colBet, col(func(s second) float64 { return float64(s.Accepted) })},
		{colCash, col(func(s second) float64 { return float64(s.Cashouts) })},
	})
	top += panelH + panelSpace
	panel(img, top, "QUEUE PENDING MOVEMENTS", n, []series{
		{colQueue, col(func(s second) float64 { return s.Pending })},
	})
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panel draws one panel whose plot area starts at y top.
func panel(img *image.RGBA, top int, title string, n int, ss []series) {
	left, right, bottom := marginL, chartW-marginR, top+panelH
	ymax := 0.0
	for _, s := range ss {
		for _, y := range s.ys {
			ymax = math.Max(ymax, y)
		}
	}
	ymax = niceCeil(ymax)
	text(img, left, top-16, title, colAxis, 2)
	for k := 0; k <= 4; k++ {
		y := bottom - k*(panelH)/4
		hline(img, left, right, y, colGrid)
		text(img, 4, y-5, trimNum(ymax*float64(k)/4), colAxis, 2)
	}
	xOf := func(i int) int { return left + i*(right-left)/max(n-1, 1) }
	step := max(1, n/12)
	for i := 0; i < n; i += step {
		vline(img, xOf(i), top, bottom, colGrid)
		text(img, xOf(i)-6, bottom+6, fmt.Sprint(i), colAxis, 2)
	}
	hline(img, left, right, bottom, colAxis)
	vline(img, left, top, bottom, colAxis)
	for _, s := range ss {
		prevX, prevY := -1, -1
		for i, v := range s.ys {
			x := xOf(i)
			y := bottom - int(v/ymax*float64(panelH))
			if prevX >= 0 {
				line(img, prevX, prevY, x, y, s.c)
			}
			prevX, prevY = x, y
		}
	}
	// Legend swatches after the title.
	x := left + len(title)*8 + 16
	for _, s := range ss {
		fill(img, image.Rect(x, top-16, x+14, top-6), s.c)
		x += 20
	}
}

func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimNum(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

func hline(img *image.RGBA, x0, x1, y int, c color.RGBA) {
	fill(img, image.Rect(x0, y, x1+1, y+1), c)
}

func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA) {
	fill(img, image.Rect(x, y0, x+1, y1+1), c)
}

// line draws a 2-pixel line (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		fill(img, image.Rect(x0, y0, x0+2, y0+2), c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// glyphs is a 3x5 pixel font: five rows of three bits each.
var glyphs = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 3, 1, 7}, '4': {5, 5, 7, 1, 1},
	'5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 2, 2}, '8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7},
	'.': {0, 0, 0, 0, 2}, '/': {1, 1, 2, 4, 4}, '-': {0, 0, 7, 0, 0},
	'A': {2, 5, 7, 5, 5}, 'B': {6, 5, 6, 5, 6}, 'C': {7, 4, 4, 4, 7}, 'D': {6, 5, 5, 5, 6}, 'E': {7, 4, 6, 4, 7},
	'F': {7, 4, 6, 4, 4}, 'G': {7, 4, 5, 5, 7}, 'H': {5, 5, 7, 5, 5}, 'I': {7, 2, 2, 2, 7}, 'J': {1, 1, 1, 5, 7},
	'K': {5, 5, 6, 5, 5}, 'L': {4, 4, 4, 4, 7}, 'M': {5, 7, 7, 5, 5}, 'N': {6, 5, 5, 5, 5}, 'O': {7, 5, 5, 5, 7},
	'P': {7, 5, 7, 4, 4}, 'Q': {7, 5, 5, 7, 1}, 'R': {6, 5, 6, 5, 5}, 'S': {7, 4, 7, 1, 7}, 'T': {7, 2, 2, 2, 2},
	'U': {5, 5, 5, 5, 7}, 'V': {5, 5, 5, 5, 2}, 'W': {5, 5, 7, 7, 5}, 'X': {5, 5, 2, 5, 5}, 'Y': {5, 5, 2, 2, 2},
	'Z': {7, 1, 2, 4, 7},
}

// text draws s at (x, y) with pixels scale wide.
func text(img *image.RGBA, x, y int, s string, c color.RGBA, scale int) {
	for _, r := range strings.ToUpper(s) {
		if g, ok := glyphs[r]; ok {
			for row := range 5 {
				for bit := range 3 {
					if g[row]&(4>>bit) != 0 {
						fill(img, image.Rect(x+bit*scale, y+row*scale, x+(bit+1)*scale, y+(row+1)*scale), c)
					}
				}
			}
		}
		x += 4 * scale
	}
}
