import Foundation

/// A bar chart drawn on the server as SVG, inline in a page (the console runs no script): one bar
/// per point with its label and count in a `<title>` (the browser's tooltip), the first and last
/// labels under the axis, 0 and the largest count beside it. Every text is XML-escaped; colours
/// come from the console's style sheet (classes), with `fill` attributes as the fallback, so the
/// Content-Security-Policy needs no inline style.
public struct SVGChart: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public var label: String
        public var count: Int64

        public init(label: String, count: Int64) {
            self.label = label
            self.count = count
        }
    }

    /// What the chart shows, for screen readers (`aria-label`) and its own `<title>`.
    public var title: String
    public var points: [Point]
    public var width: Int
    public var height: Int

    public init(title: String, points: [Point], width: Int = 600, height: Int = 170) {
        self.title = title
        self.points = points
        self.width = max(120, width)
        self.height = max(80, height)
    }

    /// The largest count (0 for none or only zeros).
    public var maximum: Int64 { points.map(\.count).max().map { max(0, $0) } ?? 0 }

    // Room for the counts on the left and the days below.
    static let left = 44.0, right = 6.0, top = 10.0, bottom = 24.0

    /// The chart as an `<svg>` element.
    public var svg: String {
        let plotWidth = Double(width) - Self.left - Self.right
        let plotHeight = Double(height) - Self.top - Self.bottom
        let baseline = Self.top + plotHeight
        let maximum = self.maximum
        let slot = points.isEmpty ? plotWidth : plotWidth / Double(points.count)
        let barWidth = max(1, slot * 0.8)
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 \(width) \(height)" width="\(width)" height="\(height)" role="img" aria-label="\(Self.escape(title))">\
            <title>\(Self.escape(title))</title>
            """
        // The axes, and the scale: 0 at the baseline, the largest count at the top.
        svg += #"<line class="axis" x1="\#(Self.number(Self.left))" y1="\#(Self.number(Self.top))" x2="\#(Self.number(Self.left))" y2="\#(Self.number(baseline))" stroke="rgb(93,103,120)"/>"#
        svg += #"<line class="axis" x1="\#(Self.number(Self.left))" y1="\#(Self.number(baseline))" x2="\#(Self.number(Self.left + plotWidth))" y2="\#(Self.number(baseline))" stroke="rgb(93,103,120)"/>"#
        svg += #"<text class="scale" x="\#(Self.number(Self.left - 4))" y="\#(Self.number(Self.top + 8))" text-anchor="end" font-size="10" fill="rgb(93,103,120)">\#(maximum)</text>"#
        svg += #"<text class="scale" x="\#(Self.number(Self.left - 4))" y="\#(Self.number(baseline))" text-anchor="end" font-size="10" fill="rgb(93,103,120)">0</text>"#
        for (index, point) in points.enumerated() {
            let x = Self.left + Double(index) * slot + (slot - barWidth) / 2
            // A share of the plot's height: no bar for 0, a bar of the full height for the maximum.
            let share = maximum > 0 ? Double(max(0, point.count)) / Double(maximum) : 0
            let barHeight = share * plotHeight
            let tooltip = "\(Self.escape(point.label)): \(point.count)"
            // The whole slot answers the pointer, so a day with no bar still shows its tooltip.
            svg += #"<g class="day"><title>\#(tooltip)</title>"#
            svg += #"<rect class="slot" x="\#(Self.number(Self.left + Double(index) * slot))" y="\#(Self.number(Self.top))" width="\#(Self.number(slot))" height="\#(Self.number(plotHeight))" fill="black" fill-opacity="0"/>"#
            svg += #"<rect class="bar" x="\#(Self.number(x))" y="\#(Self.number(baseline - barHeight))" width="\#(Self.number(barWidth))" height="\#(Self.number(barHeight))" fill="rgb(47,91,211)"/>"#
            svg += "</g>"
        }
        if let first = points.first, let last = points.last {
            svg += #"<text class="label" x="\#(Self.number(Self.left))" y="\#(Self.number(Double(height) - 6))" font-size="10" fill="rgb(93,103,120)">\#(Self.escape(first.label))</text>"#
            if points.count > 1 {
                svg += #"<text class="label" x="\#(Self.number(Self.left + plotWidth))" y="\#(Self.number(Double(height) - 6))" text-anchor="end" font-size="10" fill="rgb(93,103,120)">\#(Self.escape(last.label))</text>"#
            }
        }
        svg += "</svg>"
        return svg
    }

    /// Text for XML content and attribute values.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            // Characters XML 1.0 does not allow at all (controls but tab and newlines, lone surrogates
            // cannot occur in a String, U+FFFE and U+FFFF): left out rather than break the document.
            case "\u{9}", "\u{A}", "\u{D}": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: continue
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// A coordinate with at most two decimals, in the C locale.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let text = String(format: "%.2f", value)
        return text.hasSuffix(".00") ? String(text.dropLast(3)) : text
    }
}
