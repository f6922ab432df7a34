# Sourced by same_graph (lib.sh): FILE A (perf report's call graph text) and FILE B (preport's) are the
# same graph: the same lines once percentages are set aside, each percentage within 0.05 points
# of perf's; where one side splits a sliver off a node that the other prints as its only child
# ("--51.06%--start_thread" against "---start_thread": a sample or two that perf unwinds short
# of clone3, or preport does), the split's share within 0.05 of the parent's. Exit 0 when so.
# norm: the line with each split marker "--P%--" as "---" and runs of blanks as one blank;
# marks: the markers' percentages; main: the other percentages
function norm(s, marks, main,   nm, n, t) {
	nm = 0
	while (match(s, /--[0-9]+\.[0-9]+%--/)) {
		marks[++nm] = substr(s, RSTART + 2, RLENGTH - 5) + 0
		s = substr(s, 1, RSTART - 1) "---" substr(s, RSTART + RLENGTH)
	}
	marks[0] = nm
	gsub(/[ \t]+/, " ", s); sub(/ $/, "", s)
	n = 0; t = s
	while (match(t, /[0-9]+\.[0-9]+%/)) { main[++n] = substr(t, RSTART, RLENGTH - 1) + 0; t = substr(t, RSTART + RLENGTH) }
	main[0] = n
	gsub(/[0-9]+\.[0-9]+%/, "P%", s)
	return s
}
function near(a, b) { return a - b <= 0.0501 && b - a <= 0.0501 }
FNR == NR { a[FNR] = $0; na = FNR; next }
{
	nb = FNR
	if (norm(a[FNR], ma, pa) != norm($0, mb, pb)) { bad = 1; next }
	for (i = 1; i <= pa[0]; i++) if (!near(pa[i], pb[i])) bad = 1
	if (ma[0] == mb[0]) {
		for (i = 1; i <= ma[0]; i++) if (!near(ma[i], mb[i])) bad = 1
	} else if (ma[0] + mb[0] == 1) {
		# one side splits off a sliver where the other has one child: the split's share
		# must be within 0.05 of the parent's, the last share above it on that side
		if (ma[0]) { if (!near(ma[1], lasta)) bad = 1 } else if (!near(mb[1], lastb)) bad = 1
	} else bad = 1
	if (pa[0]) lasta = pa[1]; if (ma[0]) lasta = ma[ma[0]]
	if (pb[0]) lastb = pb[1]; if (mb[0]) lastb = mb[mb[0]]
}
END { exit bad || na != nb }
