package plangraph

// Writing the SVG. The document is self-contained: one <style> element
// whose selectors are all scoped under the root's class (so the drawing
// can be inlined into an HTML page without restyling it), no scripts, no
// external fonts or images, no element ids (arrowheads are drawn, not
// markers, so several drawings can share a page). Numbers are integers
// printed with strconv, and everything is written in Layout order, so the
// bytes depend on the plan alone.

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
)

// Options controls a drawing. The zero value is the default, what
// `vmcpc plan --format svg` prints and the web console serves; no option
// exists yet, and new ones will keep the zero value's drawing.
type Options struct{}

// SVG draws a planned workflow as an SVG document: Lay, then WriteSVG.
func SVG(w io.Writer, wf *ir.Workflow, opts Options) error {
	l, err := Lay(wf)
	if err != nil {
		return err
	}
	return l.WriteSVG(w, opts)
}

// fontStack is every label's font: monospace, so that text.go's width
// estimate holds (see there).
const fontStack = `ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace`

// style is the drawing's stylesheet. Colours follow GitHub's light
// palette; red is the critical path.
var style = strings.Join([]string{
	`.vmcp-plan text{font-family:` + fontStack + `;fill:#1f2328}`,
	`.vmcp-plan .pg-bg{fill:#ffffff}`,
	`.vmcp-plan .pg-title{font-size:16px;font-weight:700}`,
	`.vmcp-plan .pg-desc{font-size:12px;fill:#424a53}`,
	`.vmcp-plan .pg-stats,.vmcp-plan .pg-legend text{font-size:10px;fill:#57606a}`,
	`.vmcp-plan .pg-id{font-size:12px;font-weight:700}`,
	`.vmcp-plan .pg-act{font-size:11px;fill:#424a53}`,
	`.vmcp-plan .pg-marks{font-size:10px;fill:#9a6700}`,
	`.vmcp-plan .pg-box,.vmcp-plan .pg-stack{stroke:#8c959f;stroke-width:1}`,
	`.vmcp-plan .pg-stack{fill:#eaeef2}`,
	`.vmcp-plan .pg-tool>.pg-box{fill:#ffffff}`,
	`.vmcp-plan .pg-elicitation>.pg-box{fill:#fff8c5}`,
	`.vmcp-plan .pg-workflow>.pg-box{fill:#ddf4ff}`,
	`.vmcp-plan .pg-forEach>.pg-box{fill:#f6f8fa}`,
	`.vmcp-plan .pg-node.critical>.pg-box,.vmcp-plan .pg-node.critical>.pg-stack{stroke:#cf222e;stroke-width:2.5}`,
	`.vmcp-plan .pg-bodybg{fill:#ffffff;fill-opacity:0.6;stroke:#d0d7de;stroke-dasharray:3 2}`,
	`.vmcp-plan .pg-edge>path{fill:none;stroke:#6e7781;stroke-width:1.25}`,
	`.vmcp-plan .pg-edge>.pg-arrow{fill:#6e7781;stroke:none}`,
	`.vmcp-plan .pg-edge.critical>path{stroke:#cf222e;stroke-width:2.5}`,
	`.vmcp-plan .pg-edge.critical>.pg-arrow{fill:#cf222e;stroke:none}`,
	`.vmcp-plan .pg-node:hover>.pg-box{stroke:#0969da;stroke-width:2}`,
	`.vmcp-plan .pg-edge:hover>path{stroke:#0969da;stroke-width:2.5}`,
	`.vmcp-plan .pg-edge:hover>.pg-arrow{fill:#0969da}`,
	`.vmcp-plan .pg-group{fill:none;stroke:#8c959f;stroke-dasharray:6 4}`,
	`.vmcp-plan .pg-group-label{font-size:11px;fill:#57606a}`,
}, "\n")

// head is the text at the top of the page.
type head struct {
	title, desc, stats string
	finallyLabel       string
	width              int
}

func header(wf *ir.Workflow) head {
	h := head{title: clip(wf.Name, 80), desc: clip(firstLine(wf.Description), maxDescription)}
	st := wf.Stats
	parts := []string{
		plural(len(wf.Steps), "step"),
		plural(len(wf.Levels), "level"),
		fmt.Sprintf("at most %d in parallel", st.MaxParallelism),
		"critical path " + plural(len(wf.CriticalPath), "step"),
	}
	if len(wf.Finally) > 0 {
		parts = append(parts, "finally "+plural(len(wf.Finally), "step"))
		h.finallyLabel = fmt.Sprintf("finally: runs once every step has ended, whatever the outcome (at most %s after)", wf.FinallyBound.D())
	}
	h.stats = strings.Join(parts, " · ")
	h.width = max(textWidth(h.title, sizeTitle), textWidth(h.desc, sizeID), textWidth(h.stats, sizeSmall), legendWidth())
	return h
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// legendItems are the legend's entries: a swatch kind and its text.
var legendItems = []struct{ kind, text string }{
	{"critical", "critical path"},
	{"tool", "tool"},
	{"elicitation", "elicitation"},
	{"workflow", "sub-workflow"},
	{"forEach", "forEach (body inside)"},
	{"", "if: conditional · retry×N: retried up to N times · continue: a failure does not stop the run"},
}

const legendSwatch, legendSpace = 22, 14

func legendWidth() int {
	w := 0
	for i, it := range legendItems {
		if i > 0 {
			w += legendSpace
		}
		if it.kind != "" {
			w += legendSwatch + 4
		}
		w += textWidth(it.text, sizeSmall)
	}
	return w
}

// svgWriter writes elements with integer attributes.
type svgWriter struct {
	w   *bufio.Writer
	err error
}

func (s *svgWriter) printf(format string, args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.w, format, args...)
	}
}

// text writes a <text> element with escaped content.
func (s *svgWriter) text(class string, x, y int, content string) {
	s.printf("<text class=\"%s\" x=\"%d\" y=\"%d\">%s</text>\n", class, x, y, xmlText(content))
}

// WriteSVG writes the drawing. Options are as for SVG.
func (l *Layout) WriteSVG(w io.Writer, _ Options) error {
	s := &svgWriter{w: bufio.NewWriter(w)}
	wf := l.wf
	h := header(wf)
	s.printf("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"vmcp-plan\" data-workflow=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
		xmlText(wf.Name), l.Width, l.Height, l.Width, l.Height)
	s.printf("<title>%s</title>\n", xmlText("Plan of workflow "+wf.Name))
	if d := strings.TrimSpace(wf.Description); d != "" {
		s.printf("<desc>%s</desc>\n", xmlText(d))
	}
	s.printf("<style>\n%s\n</style>\n", style)
	s.printf("<rect class=\"pg-bg\" width=\"%d\" height=\"%d\"/>\n", l.Width, l.Height)
	s.text("pg-title", margin, 32, h.title)
	if h.desc != "" {
		// A cut description keeps its whole text as a tooltip.
		full := strings.TrimSpace(wf.Description)
		if full == h.desc {
			s.text("pg-desc", margin, 52, h.desc)
		} else {
			s.printf("<text class=\"pg-desc\" x=\"%d\" y=\"%d\"><title>%s</title>%s</text>\n", margin, 52, xmlText(full), xmlText(h.desc))
		}
	}
	s.text("pg-stats", margin, 70, h.stats)
	s.legend(margin, 80)

	s.printf("<g class=\"pg-steps\">\n")
	s.block(l.main, margin, headTop)
	s.printf("</g>\n")
	if l.fin != nil {
		s.printf("<g class=\"pg-finally\">\n")
		s.printf("<rect class=\"pg-group\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"8\"/>\n", margin, l.finY, l.finW, l.finH)
		s.text("pg-group-label", margin+bodyPad, l.finY+18, h.finallyLabel)
		s.block(l.fin, margin+bodyPad, l.finY+groupHead)
		s.printf("</g>\n")
	}
	s.printf("</svg>\n")
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

// legend draws the legend row with its top at y.
func (s *svgWriter) legend(x, y int) {
	s.printf("<g class=\"pg-legend\">\n")
	for i, it := range legendItems {
		if i > 0 {
			x += legendSpace
		}
		switch it.kind {
		case "":
		case "critical":
			s.printf("<g class=\"pg-edge critical\"><path d=\"M%d %dH%d\"/></g>\n", x, y+8, x+legendSwatch)
			x += legendSwatch + 4
		default:
			s.printf("<g class=\"pg-node pg-%s\">", it.kind)
			if it.kind == ir.StepForEach {
				s.printf("<rect class=\"pg-stack\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"12\" rx=\"3\"/>", x+3, y+5, legendSwatch-3)
			}
			s.printf("<rect class=\"pg-box\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"12\" rx=\"3\"/></g>\n", x, y+2, legendSwatch-3)
			x += legendSwatch + 4
		}
		s.text("", x, y+12, it.text)
		x += textWidth(it.text, sizeSmall)
	}
	s.printf("</g>\n")
}

// block draws a block at absolute offset (ox, oy): edges under boxes.
func (s *svgWriter) block(b *block, ox, oy int) {
	for _, r := range b.routes {
		s.edge(r, ox, oy)
	}
	for _, x := range b.boxes {
		s.box(x, ox, oy)
	}
}

func (s *svgWriter) edge(r *route, ox, oy int) {
	class := "pg-edge"
	if r.critical {
		class += " critical"
	}
	var d strings.Builder
	for i, p := range r.pts {
		if i == 0 {
			d.WriteString("M")
		} else {
			d.WriteString("L")
		}
		d.WriteString(strconv.Itoa(p[0] + ox))
		d.WriteString(" ")
		d.WriteString(strconv.Itoa(p[1] + oy))
	}
	end := r.pts[len(r.pts)-1]
	tx, ty := end[0]+ox, end[1]+oy
	s.printf("<g class=\"%s\" data-from=\"%s\" data-to=\"%s\"><path d=\"%s\"/><path class=\"pg-arrow\" d=\"M%d %dL%d %dL%d %dZ\"/></g>\n",
		class, xmlText(r.from.path), xmlText(r.to.path), d.String(), tx, ty, tx-7, ty-4, tx-7, ty+4)
}

func (s *svgWriter) box(x *box, ox, oy int) {
	st := x.step
	class := "pg-node pg-" + st.Type
	if x.critical {
		class += " critical"
	}
	bx, by := ox+x.x, oy+x.y
	s.printf("<g class=\"%s\" data-step=\"%s\" data-type=\"%s\">\n", xmlText(class), xmlText(x.path), xmlText(st.Type))
	s.printf("<title>%s</title>\n", xmlText(tooltip(st)))
	if st.Type == ir.StepForEach {
		s.printf("<rect class=\"pg-stack\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\"/>\n", bx+stackOff, by+stackOff, x.w, x.h)
	}
	s.printf("<rect class=\"pg-box\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\"/>\n", bx, by, x.w, x.h)
	s.text("pg-id", bx+boxPadX, by+20, x.idText)
	s.text("pg-act", bx+boxPadX, by+35, x.actText)
	if x.markText != "" {
		s.text("pg-marks", bx+boxPadX, by+49, x.markText)
	}
	if x.body != nil {
		ax, ay := bodyOrigin(x)
		s.printf("<g class=\"pg-body\" data-loop=\"%s\">\n", xmlText(x.path))
		s.printf("<rect class=\"pg-bodybg\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"4\"/>\n",
			ox+ax-bodyPad/2, oy+ay-2, x.w-bodyPad, x.body.h+bodyPad/2+2)
		s.block(x.body, ox+ax, oy+ay)
		s.printf("</g>\n")
	}
	s.printf("</g>\n")
}
