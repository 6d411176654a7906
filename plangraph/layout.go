package plangraph

// Layout: where every box and edge goes. Everything is integer pixels and
// every choice is made in plan order (never map order), so the same plan
// always gives the same drawing.
//
// A graph (the workflow's steps, a loop body, or the finally steps) is
// drawn as a block of columns, one column per level, left to right. Each
// step is a box; a forEach with a body is a box holding the body's own
// block below its header, laid out first (bottom up), so loops nest to any
// depth. Per block:
//
//  1. Size. A box is as wide as its longest label (text.go) plus padding,
//     at least minBoxW; two lines high (id, action), three with badges
//     (if, retry×N, continue). A column is as wide as its widest box.
//
//  2. Order and rows (a one-pass barycentre heuristic). Column 0 keeps
//     plan order and stacks from the top. In each later column, every box
//     wants its port (the middle of its header's left side) at the mean
//     port height of its dependencies, which all sit in earlier columns
//     and are placed already. Boxes are sorted by that wish (ties in plan
//     order) and placed top to bottom, each at its wish or just below the
//     previous box. A chain comes out as one straight row, a fan-in meets
//     between its sources, and edges rarely cross.
//
//  3. Tracks. Every edge leaves its source's right side and enters its
//     target's left side, orthogonally. Its vertical runs are in the gaps
//     between columns, where no box is: in the gap before the target, on
//     the target's "in" track (all edges into one box share it and merge
//     there), and for an edge that skips columns also in the gap after
//     the source, on the source's "out" track. A gap has one track per
//     distinct in/out box, spaced trackGap apart: the out tracks, then
//     the in tracks, then the in tracks of boxes level with one of their
//     sources (so a line leaving a box never runs along the last stretch
//     of a line entering another), each kind ordered by its box's height;
//     the gap widens with its tracks. A box whose port would be
//     at the height of a box in the previous column that it does not
//     depend on moves down by nudge, for the same reason.
//
//  4. Lanes. An edge that skips columns crosses the columns in between
//     horizontally, on a lane: the free height (outside every box of
//     those columns, with laneClear to spare) nearest its source's port,
//     moved by laneGap when another lane already runs there over an
//     overlapping span. A lane may run above or below all the boxes; the
//     block grows to hold it. So edges never cross boxes.
//
//  5. The block is shifted so its top is at 0; its size is its extent.
//
// The page is the title, the statistics line and the legend at the top,
// the workflow's block below them, and the finally block in a dashed
// group of its own below that. Lay converts every block position to
// absolute page coordinates for Layout.Nodes and Layout.Edges; WriteSVG
// (svg.go) draws from the same numbers.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
)

// Geometry, in px.
const (
	margin    = 16 // around the page
	boxPadX   = 10 // text inset inside a box
	minBoxW   = 110
	boxH2     = 44 // a box with two lines of text
	boxH3     = 57 // a box with a badge line
	rowGap    = 20 // between boxes of a column
	colGap    = 40 // a gap between columns with one track
	trackGap  = 8  // between the tracks of a gap
	laneClear = 6  // between a lane and the boxes it passes
	laneGap   = 6  // between two lanes over one span
	bodyPad   = 10 // around a loop body inside its box
	nudge     = 10 // how far a box moves down off another's port height
	clash     = 4  // ports closer than this are at the same height
	stackOff  = 4  // the offset of a loop's second (stacked) outline
	headTop   = 110
	groupGap  = 28 // between the workflow's block and the finally group
	groupHead = 28 // the finally group's label line
	// maxDepth bounds how deeply bodies nest (ir.MaxLoopDepth, with room
	// for hand-built plans); deeper is a malformed plan, not a stack
	// overflow.
	maxDepth = 8
)

// Layout is a workflow's drawing: page size, every step's box and every
// edge, in absolute SVG user units (CSS px). Nodes and Edges are in
// drawing order: a block's edges, then its boxes in plan order, each
// followed by its loop body's; the finally steps last.
type Layout struct {
	Width, Height int
	Nodes         []Node
	Edges         []Edge

	wf   *ir.Workflow
	main *block
	fin  *block
	// finY is the top of the finally group (0 when there is none).
	finY, finW, finH int
}

// Node is one step's box.
type Node struct {
	// Path is the data-step value: the step id, or for a loop-body step
	// the ids of its enclosing loops and its own joined by "/".
	Path string
	ID   string
	// Loop is the Path of the enclosing forEach ("" outside bodies).
	Loop    string
	Finally bool
	Type    string
	// Action is the text under the id: backend.tool, "workflow NAME",
	// "elicitation" or "forEach ITEM[: inner action]".
	Action string
	// Level is the step's level within its own graph.
	Level    int
	Critical bool
	X, Y     int
	W, H     int
}

// Edge is one dependency, drawn from From's box to To's.
type Edge struct {
	From, To string
	Critical bool
	// Points is the orthogonal polyline from the source's right side to
	// the target's left side.
	Points [][2]int
}

// box is a step's box inside its block.
type box struct {
	step     *ir.Step
	idx      int  // the step's index in its list
	out      bool // some step of the block depends on it
	path     string
	loop     string
	finally  bool
	col      int
	critical bool
	x, y     int // top left, relative to the block
	w, h     int
	headH    int // the header's height (h, unless there is a body)
	idText   string
	actText  string
	markText string
	body     *block
	// wish is the port height step 2 aims for.
	wish int
}

// port is the height where edges meet the box, relative to the block.
func (b *box) port() int { return b.y + b.headH/2 }

// route is one edge inside a block.
type route struct {
	from, to *box
	critical bool
	pts      [][2]int
}

// block is a laid-out graph: its boxes in plan order, its columns top to
// bottom, its edges, and its size.
type block struct {
	boxes  []*box
	cols   [][]*box
	routes []*route
	w, h   int
}

// Lay computes the drawing of a planned workflow. It fails only on a nil
// or malformed workflow (indexes out of range, a step in no level or in
// two, a dependency that is not in an earlier level, bodies nested more
// than maxDepth deep).
func Lay(wf *ir.Workflow) (*Layout, error) {
	if wf == nil {
		return nil, fmt.Errorf("plangraph: no workflow to draw")
	}
	main, err := layBlock(wf.Steps, wf.Levels, wf.CriticalPath, true, "", false, 1)
	if err != nil {
		return nil, fmt.Errorf("plangraph: workflow %q: %w", wf.Name, err)
	}
	l := &Layout{wf: wf, main: main}
	if len(wf.Finally) > 0 {
		fin, err := layBlock(wf.Finally, wf.FinallyLevels, nil, false, "", true, 1)
		if err != nil {
			return nil, fmt.Errorf("plangraph: workflow %q: finally: %w", wf.Name, err)
		}
		l.fin = fin
	}

	h := header(wf)
	width := max(h.width, main.w)
	height := headTop + main.h
	if l.fin != nil {
		l.finY = height + groupGap
		l.finW = max(l.fin.w+2*bodyPad, textWidth(h.finallyLabel, sizeAction)+2*bodyPad)
		l.finH = groupHead + l.fin.h + bodyPad
		width = max(width, l.finW)
		height = l.finY + l.finH
	}
	l.Width = width + 2*margin
	l.Height = height + margin

	l.collect(main, margin, headTop)
	if l.fin != nil {
		l.collect(l.fin, margin+bodyPad, l.finY+groupHead)
	}
	return l, nil
}

// collect appends a block's edges and boxes, bodies depth first, at the
// block's absolute offset (ox, oy).
func (l *Layout) collect(b *block, ox, oy int) {
	for _, r := range b.routes {
		pts := make([][2]int, len(r.pts))
		for i, p := range r.pts {
			pts[i] = [2]int{p[0] + ox, p[1] + oy}
		}
		l.Edges = append(l.Edges, Edge{From: r.from.path, To: r.to.path, Critical: r.critical, Points: pts})
	}
	for _, x := range b.boxes {
		l.Nodes = append(l.Nodes, Node{
			Path: x.path, ID: x.step.ID, Loop: x.loop, Finally: x.finally,
			Type: x.step.Type, Action: action(x.step), Level: x.col, Critical: x.critical,
			X: ox + x.x, Y: oy + x.y, W: x.w, H: x.h,
		})
		if x.body != nil {
			bx, by := bodyOrigin(x)
			l.collect(x.body, ox+bx, oy+by)
		}
	}
}

// bodyOrigin is where a loop's body block sits, relative to the loop's
// block.
func bodyOrigin(x *box) (int, int) { return x.x + bodyPad, x.y + x.headH + 2 }

// layBlock lays out one graph: steps in plan order, levels, and the
// critical path (drawn as such when critical is true). prefix is the
// path of the enclosing loop ("" at top level).
func layBlock(steps []*ir.Step, levels [][]int, path []int, critical bool, prefix string, finally bool, depth int) (*block, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("loop bodies nest more than %d deep", maxDepth)
	}
	col, err := checkGraph(steps, levels, path)
	if err != nil {
		return nil, err
	}
	onPath := map[int]bool{}
	critEdge := map[[2]int]bool{}
	if critical {
		for i, x := range path {
			onPath[x] = true
			if i > 0 {
				critEdge[[2]int{path[i-1], x}] = true
			}
		}
	}

	b := &block{boxes: make([]*box, len(steps))}
	for i, s := range steps {
		x := &box{step: s, idx: i, path: s.ID, loop: prefix, finally: finally, col: col[i], critical: onPath[i]}
		if prefix != "" {
			x.path = prefix + "/" + s.ID
		}
		if err := sizeBox(x, finally, depth); err != nil {
			return nil, err
		}
		b.boxes[i] = x
	}

	for _, s := range steps {
		for _, d := range s.Deps {
			b.boxes[d].out = true
		}
	}

	// 2. Order and rows.
	b.cols = make([][]*box, len(levels))
	for c, level := range levels {
		for _, i := range level {
			b.cols[c] = append(b.cols[c], b.boxes[i])
		}
	}
	for c, column := range b.cols {
		if c > 0 {
			for _, x := range column {
				sum := 0
				for _, d := range x.step.Deps {
					sum += b.boxes[d].port()
				}
				x.wish = sum / len(x.step.Deps)
			}
			sort.SliceStable(column, func(i, j int) bool { return column[i].wish < column[j].wish })
		}
		next := 0
		for i, x := range column {
			y := next
			if c > 0 && (i == 0 || x.wish-x.headH/2 > next) {
				y = x.wish - x.headH/2
			}
			x.y = y
			if c > 0 {
				for n := 0; n < 20 && portClash(x, b.cols[c-1]); n++ {
					x.y += nudge
				}
			}
			next = x.y + x.h + rowGap
		}
	}

	// Edges in plan order: each step's dependencies in Deps order.
	for i, s := range steps {
		for _, d := range s.Deps {
			b.routes = append(b.routes, &route{from: b.boxes[d], to: b.boxes[i], critical: critEdge[[2]int{d, i}]})
		}
	}
	b.route()
	return b, nil
}

// portClash reports whether x's port is at the height of the port of a
// box in the previous column that has edges of its own but none to x:
// that box's outgoing edges run along the same line as x's incoming ones
// in the gap between them, and would seem to enter x.
func portClash(x *box, prev []*box) bool {
	for _, p := range prev {
		if !p.out || abs(p.port()-x.port()) >= clash || slices.Contains(x.step.Deps, p.idx) {
			continue
		}
		return true
	}
	return false
}

// sizeBox measures a box's labels and lays out its body, if it has one.
func sizeBox(x *box, finally bool, depth int) error {
	s := x.step
	x.idText = clip(s.ID, maxLabel)
	x.actText = clip(action(s), maxLabel)
	x.markText = strings.Join(marks(s), " · ")
	x.w = max(minBoxW, textWidth(x.idText, sizeID)+2*boxPadX, textWidth(x.actText, sizeAction)+2*boxPadX,
		textWidth(x.markText, sizeSmall)+2*boxPadX)
	x.h = boxH2
	if x.markText != "" {
		x.h = boxH3
	}
	x.headH = x.h
	if fe := s.ForEach; fe != nil && len(fe.Steps) > 0 {
		body, err := layBlock(fe.Steps, fe.Levels, fe.CriticalPath, x.critical, x.path, finally, depth+1)
		if err != nil {
			return fmt.Errorf("body of %q: %w", s.ID, err)
		}
		x.body = body
		x.w = max(x.w, body.w+2*bodyPad)
		x.h = x.headH + 2 + body.h + bodyPad
	}
	return nil
}

// checkGraph checks that levels and dependencies are consistent (so that
// layout can index freely) and returns each step's column.
func checkGraph(steps []*ir.Step, levels [][]int, path []int) ([]int, error) {
	col := make([]int, len(steps))
	for i := range col {
		col[i] = -1
	}
	for l, level := range levels {
		for _, i := range level {
			if i < 0 || i >= len(steps) {
				return nil, fmt.Errorf("level %d lists step index %d, but there are %d steps; compile the plan again", l, i, len(steps))
			}
			if col[i] >= 0 {
				return nil, fmt.Errorf("step %q is in levels %d and %d; compile the plan again", steps[i].ID, col[i], l)
			}
			col[i] = l
		}
	}
	for i, s := range steps {
		if s == nil {
			return nil, fmt.Errorf("step index %d is missing; compile the plan again", i)
		}
		if col[i] < 0 {
			return nil, fmt.Errorf("step %q is in no level; compile the plan again", s.ID)
		}
		if strings.Contains(s.ID, "/") {
			return nil, fmt.Errorf("step id %q contains \"/\", which node paths use as a separator", s.ID)
		}
	}
	for i, s := range steps {
		for _, d := range s.Deps {
			if d < 0 || d >= len(steps) {
				return nil, fmt.Errorf("step %q depends on index %d, but there are %d steps; compile the plan again", s.ID, d, len(steps))
			}
			if col[d] >= col[i] {
				return nil, fmt.Errorf("step %q (level %d) depends on %q (level %d), which is not an earlier level; compile the plan again",
					s.ID, col[i], steps[d].ID, col[d])
			}
		}
	}
	for _, i := range path {
		if i < 0 || i >= len(steps) {
			return nil, fmt.Errorf("critical path lists step index %d, but there are %d steps; compile the plan again", i, len(steps))
		}
	}
	return col, nil
}

// trackKey names a track: the one into a box (in) or out of it.
type trackKey struct {
	in bool
	b  *box
}

// trackRank orders the tracks of a gap: out tracks, then in tracks, then
// the in tracks of boxes level with one of their sources (whose edge is
// a straight line), so that no line leaving a box runs along the last
// stretch of a line entering another.
func trackRank(k trackKey, aligned map[*box]bool) int {
	switch {
	case !k.in:
		return 0
	case aligned[k.b]:
		return 2
	}
	return 1
}

// route does steps 3 to 5 of the algorithm for the block's edges.
func (b *block) route() {
	ncol := len(b.cols)
	// 3. Tracks per gap (gap c lies between column c and c+1).
	tracks := make([][]trackKey, max(ncol-1, 0))
	seen := map[trackKey]bool{}
	add := func(gap int, k trackKey) {
		if !seen[k] {
			seen[k] = true
			tracks[gap] = append(tracks[gap], k)
		}
	}
	aligned := map[*box]bool{}
	for _, r := range b.routes {
		if r.to.col-r.from.col == 1 && abs(r.to.port()-r.from.port()) < clash {
			aligned[r.to] = true
		}
		add(r.to.col-1, trackKey{in: true, b: r.to})
		if r.to.col-r.from.col > 1 {
			add(r.from.col, trackKey{in: false, b: r.from})
		}
	}

	colX := make([]int, ncol)
	colW := make([]int, ncol)
	for c, column := range b.cols {
		for _, x := range column {
			colW[c] = max(colW[c], x.w)
		}
	}
	trackX := map[trackKey]int{}
	x := 0
	for c := range b.cols {
		colX[c] = x
		x += colW[c]
		if c == ncol-1 {
			break
		}
		ts := tracks[c]
		sort.SliceStable(ts, func(i, j int) bool {
			if ri, rj := trackRank(ts[i], aligned), trackRank(ts[j], aligned); ri != rj {
				return ri < rj
			}
			return ts[i].b.port() < ts[j].b.port()
		})
		for i, k := range ts {
			trackX[k] = x + colGap/2 + i*trackGap
		}
		x += colGap + trackGap*max(len(ts)-1, 0)
	}
	b.w = x
	for c, column := range b.cols {
		for _, bx := range column {
			bx.x = colX[c]
		}
	}

	// 4. Lanes, then the polylines.
	type lane struct{ y, from, to int }
	var lanes []lane
	for _, r := range b.routes {
		s, t := r.from, r.to
		sx, sy := s.x+s.w, s.port()
		tx, ty := t.x, t.port()
		in := trackX[trackKey{in: true, b: t}]
		if t.col-s.col == 1 {
			r.pts = simplify([][2]int{{sx, sy}, {in, sy}, {in, ty}, {tx, ty}})
			continue
		}
		taken := func(y int) bool {
			for _, c := range [2]int{s.col, t.col} {
				for _, x := range b.cols[c] {
					if x != s && x != t && abs(x.port()-y) < clash {
						return true
					}
				}
			}
			for _, ln := range lanes {
				if abs(ln.y-y) < laneGap && ln.from <= t.col-1 && s.col <= ln.to {
					return true
				}
			}
			return false
		}
		y := pickLane(b.freeSpans(s.col+1, t.col-1), sy, taken)
		// A lane runs through the gaps s.col to t.col-1.
		lanes = append(lanes, lane{y: y, from: s.col, to: t.col - 1})
		out := trackX[trackKey{in: false, b: s}]
		r.pts = simplify([][2]int{{sx, sy}, {out, sy}, {out, y}, {in, y}, {in, ty}, {tx, ty}})
	}

	// 5. Shift to top 0 and measure.
	top, bottom := 0, 0
	first := true
	extend := func(lo, hi int) {
		if first || lo < top {
			top = lo
		}
		if first || hi > bottom {
			bottom = hi
		}
		first = false
	}
	for _, bx := range b.boxes {
		extend(bx.y, bx.y+bx.h+stackOff)
	}
	for _, ln := range lanes {
		extend(ln.y-laneClear, ln.y+laneClear)
	}
	for _, bx := range b.boxes {
		bx.y -= top
	}
	for _, r := range b.routes {
		for i := range r.pts {
			r.pts[i][1] -= top
		}
	}
	b.h = bottom - top
	if len(b.boxes) > 0 {
		b.w += stackOff
	}
}

// freeSpans are the heights, from minus to plus infinity, that no box of
// columns from..to (with laneClear around it) covers, as closed spans.
func (b *block) freeSpans(from, to int) [][2]int {
	var used [][2]int
	for c := from; c <= to; c++ {
		for _, x := range b.cols[c] {
			used = append(used, [2]int{x.y - laneClear, x.y + x.h + stackOff + laneClear})
		}
	}
	sort.Slice(used, func(i, j int) bool {
		if used[i][0] != used[j][0] {
			return used[i][0] < used[j][0]
		}
		return used[i][1] < used[j][1]
	})
	const inf = 1 << 30
	var free [][2]int
	lo := -inf
	for _, u := range used {
		if u[0] > lo {
			free = append(free, [2]int{lo, u[0]})
		}
		lo = max(lo, u[1])
	}
	return append(free, [2]int{lo, inf})
}

// pickLane is the height nearest to want (the smaller of two equally
// near) that lies in one of the free spans and is not taken, trying
// want clamped into each span and then laneGap steps either way inside
// it. The last span is unbounded below, so there is always one.
func pickLane(free [][2]int, want int, taken func(int) bool) int {
	best, bestD := 0, -1
	consider := func(y int) {
		if d := abs(y - want); (bestD < 0 || d < bestD || (d == bestD && y < best)) && !taken(y) {
			best, bestD = y, d
		}
	}
	for _, f := range free {
		start := min(max(want, f[0]), f[1])
		for k := 0; k < 64; k++ {
			for _, y := range [2]int{start + k*laneGap, start - k*laneGap} {
				if y >= f[0] && y <= f[1] {
					consider(y)
				}
			}
			if bestD >= 0 && bestD <= abs(start-want)+k*laneGap {
				break
			}
		}
	}
	return best
}

// simplify drops repeated points and the middle one of three collinear
// points, so a straight edge is one segment.
func simplify(pts [][2]int) [][2]int {
	out := make([][2]int, 0, len(pts))
	for _, p := range pts {
		if n := len(out); n > 0 && out[n-1] == p {
			continue
		}
		if n := len(out); n >= 2 {
			a, b := out[n-2], out[n-1]
			if (a[0] == b[0] && b[0] == p[0]) || (a[1] == b[1] && b[1] == p[1]) {
				out[n-1] = p
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
