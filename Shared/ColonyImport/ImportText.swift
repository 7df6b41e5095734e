import ColonyPlatform

/// A source text made to fit one of Colony's limits instead of dropping its row (and, with an
/// owner's row, everything that hangs off it): surrounding whitespace trimmed as the live rules
/// trim it, a text over the limit cut there, a blank one given a default. Lengths are Unicode
/// scalars, as `TextRules` counts them; a cut falls between characters (never inside an emoji).
public enum ImportText {
    public enum Change: Equatable, Sendable {
        /// Cut to the limit (was `from` scalars long).
        case cut(from: Int)
        /// Blank or absent, given the default.
        case defaulted
    }

    /// `text` as Colony takes it, and what was changed (nil: nothing). With `fallback` nil a blank
    /// text stays absent (an optional field); with one, it becomes the fallback, itself fitted.
    /// `trim: false` keeps a fitting text exactly as written (post bodies).
    public static func fit(_ text: String?, max: Int, fallback: String? = nil, trim: Bool = true) -> (value: String?, change: Change?) {
        func defaulted() -> (value: String?, change: Change?) {
            guard let fallback, let value = cut(TextRules.trimmed(fallback), max: max), !value.isEmpty else { return (nil, nil) }
            return (value, .defaulted)
        }
        guard let text, !TextRules.trimmed(text).isEmpty else { return defaulted() }
        let kept = trim ? TextRules.trimmed(text) : text
        let length = TextRules.length(kept)
        guard length > max else { return (kept, nil) }
        guard let value = cut(kept, max: max).map(TextRules.trimmed), !value.isEmpty else { return defaulted() }
        return (value, .cut(from: length))
    }

    /// The longest run of whole characters from the start that is at most `max` scalars.
    static func cut(_ text: String, max: Int) -> String? {
        guard max > 0 else { return nil }
        var kept = "", count = 0
        for character in text {
            let scalars = character.unicodeScalars.count
            if count + scalars > max { break }
            kept.append(character)
            count += scalars
        }
        return kept
    }

    /// The report's reason for a change (the same for every row changed the same way, so the
    /// summary counts them).
    public static func reason(_ change: Change, field: String, max: Int) -> String {
        switch change {
        case .cut: "\(field) over Colony's \(max) characters: cut to \(max)"
        case .defaulted: "\(field) blank: given a default"
        }
    }
}

extension RowWriter {
    /// `text` fitted to `max` (`ImportText.fit`); a change is reported against this row.
    public func fit(_ text: String?, _ field: String, max: Int, fallback: String? = nil, trim: Bool = true) -> String? {
        let (value, change) = ImportText.fit(text, max: max, fallback: fallback, trim: trim)
        if let change { adjusted(ImportText.reason(change, field: field, max: max)) }
        return value
    }

    /// Reports this row as imported with a change (`ImportReport.adjusted`).
    public func adjusted(_ reason: String) {
        service.report.adjusted(table, id: sourceID, reason: reason)
    }
}
