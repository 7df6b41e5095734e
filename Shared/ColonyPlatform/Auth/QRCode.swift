import Foundation

/// QR codes (ISO/IEC 18004:2015, Model 2) drawn as SVG, for the `otpauth://` URI of a TOTP
/// enrolment (`totp.qr_code`). Byte mode, versions 1 to 40 chosen by length, Reed-Solomon
/// error correction over GF(256), the eight masks scored by the standard's penalty rules,
/// and a 4-module quiet zone. Written from the standard; nothing here depends on input for
/// its indexes, and input too long for version 40 is refused with `TooLong`, never a trap.
public enum QRCode {
    /// The standard's four error-correction levels (recovers about 7, 15, 25, 30 % of codewords).
    public enum ErrorCorrection: Int, Sendable, CaseIterable {
        case low = 0, medium, quartile, high

        /// The level's two bits in the format information (Table 12).
        var formatBits: Int {
            switch self {
            case .low: 0b01
            case .medium: 0b00
            case .quartile: 0b11
            case .high: 0b10
            }
        }
    }

    /// The text does not fit the largest symbol (version 40) at the chosen level.
    public struct TooLong: Error, Equatable, CustomStringConvertible {
        public let byteCount: Int
        public let limit: Int
        public init(byteCount: Int, limit: Int) {
            self.byteCount = byteCount
            self.limit = limit
        }
        public var description: String { "QR code input of \(byteCount) bytes is longer than the \(limit) bytes a version 40 symbol holds" }
    }

    /// The level of `svg`: M, as authenticator apps and most generators use. It recovers 15 % of the
    /// symbol (a glare or a notch on a phone screen) and keeps a typical 100-150-byte otpauth URI at
    /// version 6-8 (41-49 modules a side), easy for a phone camera; H, GoTrue's, needs versions 10-12.
    public static let defaultLevel = ErrorCorrection.medium

    /// A compact SVG of the symbol: one `<path>` of the dark modules on a white square, viewBox in
    /// modules including the quiet zone, `shape-rendering="crispEdges"`. It contains no `#` or `%`,
    /// so it can follow `data:image/svg+xml;utf-8,` unescaped.
    public static func svg(_ text: String) throws -> String {
        try encode(text, level: defaultLevel).svg
    }

    /// `data:image/svg+xml;utf-8,` followed by `svg(text)`: the form supabase clients put in
    /// `totp.qr_code` (GoTrue answers the bare SVG and its clients add this prefix).
    public static func svgDataURI(_ text: String) throws -> String {
        "data:image/svg+xml;utf-8," + (try svg(text))
    }

    /// The symbol for `text` (UTF-8 in byte mode; an ECI header names UTF-8 when the text is not
    /// ASCII, since byte mode otherwise means ISO 8859-1), at the smallest version that holds it.
    /// `mask` forces one of the eight masks (tests); nil picks the one with the lowest penalty.
    public static func encode(_ text: String, level: ErrorCorrection = defaultLevel, mask forcedMask: Int? = nil) throws -> Symbol {
        let bytes = Array(text.utf8)
        let eci = bytes.contains { $0 >= 0x80 }
        guard let version = version(forByteCount: bytes.count, level: level, eci: eci) else {
            throw TooLong(byteCount: bytes.count, limit: capacity(version: 40, level: level, eci: eci))
        }
        let data = dataCodewords(bytes, eci: eci, version: version, level: level)
        let codewords = interleavedCodewords(data, version: version, level: level)
        var matrix = Matrix(version: version)
        matrix.placeCodewords(codewords)
        let mask: Int
        if let forcedMask, (0..<8).contains(forcedMask) {
            mask = forcedMask
        } else {
            let penalties = (0..<8).map { matrix.masked($0, level: level).penalty }
            mask = penalties.indices.min { penalties[$0] < penalties[$1] } ?? 0
        }
        let final = matrix.masked(mask, level: level)
        return Symbol(version: version, level: level, mask: mask, size: final.size, modules: final.dark)
    }

    /// A finished symbol: `size` × `size` modules (without the quiet zone), row-major.
    public struct Symbol: Sendable, Equatable {
        public let version: Int
        public let level: ErrorCorrection
        public let mask: Int
        public let size: Int
        let modules: [Bool]

        /// Whether the module at `row`, `column` is dark; false outside the symbol (the quiet zone).
        public func isDark(row: Int, column: Int) -> Bool {
            guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
            return modules[row * size + column]
        }

        /// The quiet zone the standard asks for on each side, in modules.
        public static let quietZone = 4

        /// See `QRCode.svg`. Each row's runs of dark modules become one `M x y h n v1 h -n z`.
        public var svg: String {
            let q = Symbol.quietZone
            let side = size + 2 * q
            var path = ""
            path.reserveCapacity(size * size)
            for row in 0..<size {
                var column = 0
                while column < size {
                    guard isDark(row: row, column: column) else { column += 1; continue }
                    var end = column
                    while end < size, isDark(row: row, column: end) { end += 1 }
                    let run = end - column
                    path += "M\(column + q) \(row + q)h\(run)v1h-\(run)z"
                    column = end
                }
            }
            return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(side * 4)\" height=\"\(side * 4)\" viewBox=\"0 0 \(side) \(side)\" shape-rendering=\"crispEdges\">"
                + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"white\"/><path fill=\"black\" d=\"\(path)\"/></svg>"
        }
    }

    // MARK: - Capacity (ISO/IEC 18004 Table 9)

    /// Error-correction codewords per block, by level (L, M, Q, H) and version 1-40.
    static let eccPerBlock: [[Int]] = [
        [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
        [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30, 28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28, 30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
    ]

    /// Error-correction blocks, by level (L, M, Q, H) and version 1-40.
    static let blockCount: [[Int]] = [
        [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
        [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
        [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20, 23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
        [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25, 25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
    ]

    /// Modules left for codewords once the function patterns are drawn: the symbol's area less
    /// three finders with separators (3 × 64), two timing lines between them, both copies of the
    /// format information and the dark module (31), the alignment patterns (25 modules each, those
    /// on a timing line sharing 5 with it) and, from version 7, both copies of the version information (36).
    public static func dataModules(version: Int) -> Int {
        let size = 4 * version + 17
        var count = size * size - 3 * 64 - 2 * (size - 16) - 31
        if version >= 2 {
            let perSide = version / 7 + 2
            count -= 25 * (perSide * perSide - 3) - 2 * 5 * (perSide - 2)
        }
        if version >= 7 { count -= 36 }
        return count
    }

    /// All codewords of a version (data and error correction); leftover modules are remainder bits.
    public static func totalCodewords(version: Int) -> Int { dataModules(version: version) / 8 }

    /// Data codewords of a version at a level.
    public static func dataCodewordCount(version: Int, level: ErrorCorrection) -> Int {
        totalCodewords(version: version) - eccPerBlock[level.rawValue][version - 1] * blockCount[level.rawValue][version - 1]
    }

    /// Bits of the byte-mode character count: 8 for versions 1-9, 16 from 10 on.
    static func countBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    /// Bytes a version holds at a level in one byte-mode segment (after a 12-bit UTF-8 ECI header if `eci`).
    public static func capacity(version: Int, level: ErrorCorrection, eci: Bool = false) -> Int {
        let bits = dataCodewordCount(version: version, level: level) * 8 - 4 - countBits(version: version) - (eci ? 12 : 0)
        return min(bits / 8, (1 << countBits(version: version)) - 1)
    }

    /// The smallest version that holds `byteCount` bytes, nil past version 40.
    public static func version(forByteCount byteCount: Int, level: ErrorCorrection = defaultLevel, eci: Bool = false) -> Int? {
        (1...40).first { capacity(version: $0, level: level, eci: eci) >= byteCount }
    }

    // MARK: - Data codewords (clause 7.4)

    /// Mode indicators and counts as bits, then the terminator, zero bits to a byte boundary and
    /// the pad codewords 0xEC 0x11 alternately up to the version's data capacity.
    static func dataCodewords(_ bytes: [UInt8], eci: Bool, version: Int, level: ErrorCorrection) -> [UInt8] {
        let capacityBits = dataCodewordCount(version: version, level: level) * 8
        var bits = BitBuffer()
        if eci {
            bits.append(0b0111, count: 4)  // ECI mode
            bits.append(26, count: 8)  // ECI 000026: UTF-8
        }
        bits.append(0b0100, count: 4)  // byte mode
        bits.append(bytes.count, count: countBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacityBits - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count < capacityBits / 8 {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// Splits the data into the version's blocks (the short ones first), adds each block's
    /// Reed-Solomon codewords and interleaves: data codewords column by column, then ECC likewise.
    static func interleavedCodewords(_ data: [UInt8], version: Int, level: ErrorCorrection) -> [UInt8] {
        let blocks = blockCount[level.rawValue][version - 1]
        let ecc = eccPerBlock[level.rawValue][version - 1]
        let total = totalCodewords(version: version)
        let shortBlocks = blocks - total % blocks
        let shortData = total / blocks - ecc
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var start = 0
        for block in 0..<blocks {
            let length = shortData + (block < shortBlocks ? 0 : 1)
            let end = min(start + length, data.count)
            let chunk = Array(data[min(start, end)..<end])
            dataBlocks.append(chunk)
            eccBlocks.append(errorCorrectionCodewords(chunk, count: ecc))
            start = end
        }
        var result: [UInt8] = []
        result.reserveCapacity(total)
        for index in 0...shortData {
            for block in dataBlocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<ecc {
            for block in eccBlocks where index < block.count { result.append(block[index]) }
        }
        return result
    }

    // MARK: - Reed-Solomon over GF(256) (clause 7.5.2)

    /// α^i in GF(2^8) with the standard's field polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D), i in 0..<255.
    static let exponents: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 255)
        var value = 1
        for i in 0..<255 {
            table[i] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return table
    }()

    /// log_α of 1...255 (index 0 unused).
    static let logarithms: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for (i, value) in exponents.enumerated() { table[Int(value)] = i }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return exponents[(logarithms[Int(a)] + logarithms[Int(b)]) % 255]
    }

    /// The generator polynomial (x - α^0)(x - α^1)…(x - α^(count-1)), coefficients highest degree
    /// first without the leading 1.
    static func generator(degree count: Int) -> [UInt8] {
        var poly: [UInt8] = [1]
        for i in 0..<count {
            // Multiply by (x + α^i) (minus is plus in GF(2^8)).
            var next = [UInt8](repeating: 0, count: poly.count + 1)
            for (j, coefficient) in poly.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= multiply(coefficient, exponents[i])
            }
            poly = next
        }
        return Array(poly.dropFirst())
    }

    /// The `count` error-correction codewords of a block: the remainder of data(x)·x^count
    /// divided by the generator polynomial.
    public static func errorCorrectionCodewords(_ data: [UInt8], count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        let generator = generator(degree: count)
        var remainder = [UInt8](repeating: 0, count: count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for i in 0..<count { remainder[i] ^= multiply(generator[i], factor) }
        }
        return remainder
    }

    // MARK: - Format and version information (clauses 7.9, 7.10)

    /// The 15 format bits: level and mask, a BCH(15,5) code with generator 0x537, XOR 0x5412 so
    /// that no combination is all zeros.
    public static func formatBits(level: ErrorCorrection, mask: Int) -> Int {
        let data = (level.formatBits << 3) | (mask & 7)
        return ((data << 10) | bchRemainder(data << 10, generator: 0x537, degree: 10)) ^ 0x5412
    }

    /// The 18 version bits of versions 7-40: the version and a BCH(18,6) code with generator 0x1F25.
    public static func versionBits(_ version: Int) -> Int {
        (version << 12) | bchRemainder(version << 12, generator: 0x1F25, degree: 12)
    }

    private static func bchRemainder(_ value: Int, generator: Int, degree: Int) -> Int {
        var remainder = value
        var bit = Int.bitWidth - 1 - remainder.leadingZeroBitCount
        while bit >= degree {
            if remainder & (1 << bit) != 0 { remainder ^= generator << (bit - degree) }
            bit -= 1
        }
        return remainder
    }

    /// Centres of the alignment patterns on each axis (Annex E), versions 2-40.
    static let alignmentCentres: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
        [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50], [6, 30, 54], [6, 32, 58], [6, 34, 62],
        [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78], [6, 30, 56, 82], [6, 30, 58, 86], [6, 34, 62, 90],
        [6, 28, 50, 72, 94], [6, 26, 50, 74, 98], [6, 30, 54, 78, 102], [6, 28, 54, 80, 106], [6, 32, 58, 84, 110], [6, 30, 58, 86, 114], [6, 34, 62, 90, 118],
        [6, 26, 50, 74, 98, 122], [6, 30, 54, 78, 102, 126], [6, 26, 52, 78, 104, 130], [6, 30, 56, 82, 108, 134], [6, 34, 60, 86, 112, 138], [6, 30, 58, 86, 114, 142], [6, 34, 62, 90, 118, 146],
        [6, 30, 54, 78, 102, 126, 150], [6, 24, 50, 76, 102, 128, 154], [6, 28, 54, 80, 106, 132, 158], [6, 32, 58, 84, 110, 136, 162], [6, 26, 54, 82, 110, 138, 166], [6, 30, 58, 86, 114, 142, 170],
    ]

    /// Whether mask pattern `mask` (Table 10) flips the module at `row` (i), `column` (j).
    static func maskFlips(_ mask: Int, row i: Int, column j: Int) -> Bool {
        switch mask {
        case 0: (i + j) % 2 == 0
        case 1: i % 2 == 0
        case 2: j % 3 == 0
        case 3: (i + j) % 3 == 0
        case 4: (i / 2 + j / 3) % 2 == 0
        case 5: (i * j) % 2 + (i * j) % 3 == 0
        case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }

    // MARK: - The module matrix

    struct Matrix {
        let version: Int
        let size: Int
        var dark: [Bool]
        /// Function-pattern modules, which codewords and masks leave alone.
        var reserved: [Bool]

        init(version: Int) {
            self.version = version
            size = 4 * version + 17
            dark = [Bool](repeating: false, count: size * size)
            reserved = [Bool](repeating: false, count: size * size)
            drawFunctionPatterns()
        }

        private mutating func set(_ row: Int, _ column: Int, _ value: Bool) {
            guard (0..<size).contains(row), (0..<size).contains(column) else { return }
            dark[row * size + column] = value
            reserved[row * size + column] = true
        }

        private mutating func drawFunctionPatterns() {
            // Timing patterns: row 6 and column 6, dark on even indexes (finders overwrite their ends).
            for i in 0..<size {
                set(6, i, i % 2 == 0)
                set(i, 6, i % 2 == 0)
            }
            // Finder patterns with their light separators, at three corners.
            for (top, left) in [(0, 0), (0, size - 7), (size - 7, 0)] {
                for dr in -1...7 {
                    for dc in -1...7 {
                        let ring = max(abs(dr - 3), abs(dc - 3))
                        set(top + dr, left + dc, ring != 2 && ring != 4)
                    }
                }
            }
            // Alignment patterns, except where they would overlap a finder.
            let centres = QRCode.alignmentCentres[version - 1]
            if let last = centres.last {
                for r in centres {
                    for c in centres where !((r == 6 && c == 6) || (r == 6 && c == last) || (r == last && c == 6)) {
                        for dr in -2...2 {
                            for dc in -2...2 { set(r + dr, c + dc, max(abs(dr), abs(dc)) != 1) }
                        }
                    }
                }
            }
            // Format information (written per mask later) and the dark module beside it.
            placeFormat(0)
            set(size - 8, 8, true)
            if version >= 7 {
                let bits = QRCode.versionBits(version)
                for i in 0..<18 {
                    let on = (bits >> i) & 1 == 1
                    let a = size - 11 + i % 3
                    let b = i / 3
                    set(b, a, on)
                    set(a, b, on)
                }
            }
        }

        /// Both copies of the 15 format bits (bit 14 the most significant): around the top-left
        /// finder (bits 0-7 up column 8 from row 0, skipping the timing row; bits 8-14 along row 8
        /// from column 7 to 0, skipping the timing column), and split between the bottom-left
        /// (bits 8-14, column 8, rows size-7 to size-1) and the top-right (bits 0-7, row 8, columns
        /// size-1 to size-8).
        mutating func placeFormat(_ bits: Int) {
            func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
            for i in 0...5 { set(i, 8, bit(i)) }
            set(7, 8, bit(6))
            set(8, 8, bit(7))
            set(8, 7, bit(8))
            for i in 9...14 { set(8, 14 - i, bit(i)) }
            for i in 0...7 { set(8, size - 1 - i, bit(i)) }
            for i in 8...14 { set(size - 15 + i, 8, bit(i)) }
        }

        /// Places the codewords' bits, most significant first, in two-module columns from the
        /// bottom-right corner, upwards then downwards alternately, skipping the vertical timing
        /// column and every reserved module; modules left over (remainder bits) stay light.
        mutating func placeCodewords(_ codewords: [UInt8]) {
            let bitCount = codewords.count * 8
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                let upward = (right + 1) & 2 == 0
                for step in 0..<size {
                    let row = upward ? size - 1 - step : step
                    for column in [right, right - 1] where !reserved[row * size + column] {
                        if index < bitCount {
                            dark[row * size + column] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                        }
                        index += 1
                    }
                }
                right -= 2
            }
        }

        /// A copy with mask `mask` applied to the data modules and its format information written.
        func masked(_ mask: Int, level: ErrorCorrection) -> Matrix {
            var copy = self
            for row in 0..<size {
                for column in 0..<size where !reserved[row * size + column] && QRCode.maskFlips(mask, row: row, column: column) {
                    copy.dark[row * size + column].toggle()
                }
            }
            copy.placeFormat(QRCode.formatBits(level: level, mask: mask))
            return copy
        }

        func isDark(_ row: Int, _ column: Int) -> Bool {
            guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
            return dark[row * size + column]
        }

        /// The standard's penalty (clause 7.8.3): N1 = 3 for each run of 5 same-coloured modules in a
        /// row or column plus 1 per module beyond 5; N2 = 3 per 2×2 block of one colour; N3 = 40 per
        /// 1:1:3:1:1 finder-like pattern with 4 light modules before or after it (outside the symbol
        /// is the light quiet zone); N4 = 10 per full 5 % the dark share is away from 50 %.
        var penalty: Int {
            var score = 0
            for line in 0..<size {
                for vertical in [false, true] {
                    func at(_ i: Int) -> Bool { vertical ? isDark(i, line) : isDark(line, i) }
                    var runColour = at(0)
                    var run = 1
                    for i in 1...size {
                        if i < size, at(i) == runColour {
                            run += 1
                        } else {
                            if run >= 5 { score += 3 + run - 5 }
                            if i < size { runColour = at(i); run = 1 }
                        }
                    }
                    for start in 0...(size - 7) {
                        guard at(start), !at(start + 1), at(start + 2), at(start + 3), at(start + 4), !at(start + 5), at(start + 6) else { continue }
                        let lightBefore = (start - 4..<start).allSatisfy { !at($0) }
                        let lightAfter = (start + 7..<start + 11).allSatisfy { !at($0) }
                        if lightBefore || lightAfter { score += 40 }
                    }
                }
            }
            for row in 0..<(size - 1) {
                for column in 0..<(size - 1) {
                    let colour = isDark(row, column)
                    if isDark(row, column + 1) == colour, isDark(row + 1, column) == colour, isDark(row + 1, column + 1) == colour {
                        score += 3
                    }
                }
            }
            let darkCount = dark.reduce(0) { $0 + ($1 ? 1 : 0) }
            let total = size * size
            score += 10 * (abs(20 * darkCount - 10 * total) / total)
            return score
        }
    }

    /// Bits appended most significant first, read back as bytes.
    struct BitBuffer {
        private(set) var bits: [Bool] = []
        var count: Int { bits.count }

        mutating func append(_ value: Int, count: Int) {
            guard count > 0 else { return }
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }

        var bytes: [UInt8] {
            stride(from: 0, to: bits.count, by: 8).map { start in
                bits[start..<min(start + 8, bits.count)].enumerated().reduce(UInt8(0)) { byte, item in
                    item.element ? byte | UInt8(0x80 >> item.offset) : byte
                }
            }
        }
    }
}
