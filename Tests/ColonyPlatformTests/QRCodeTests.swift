import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

@Suite("QR code")
struct QRCodeTests {
    // MARK: Vectors of the standard

    @Test("Reed-Solomon codewords of the standard's 1-M example and of a second known 1-M block")
    func reedSolomon() {
        // ISO/IEC 18004 Annex I: "01234567" as version 1-M.
        let data: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        #expect(QRCode.errorCorrectionCodewords(data, count: 10) == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
        // "HELLO WORLD" in alphanumeric mode, version 1-M.
        let hello: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        #expect(QRCode.errorCorrectionCodewords(hello, count: 10) == [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
        #expect(QRCode.errorCorrectionCodewords([], count: 0) == [])
        #expect(QRCode.errorCorrectionCodewords([], count: 7) == [0, 0, 0, 0, 0, 0, 0])
    }

    @Test("format information: the standard's example (M, mask 101) and a code at distance 7 from every other")
    func formatInformation() {
        #expect(QRCode.formatBits(level: .medium, mask: 5) == 0b100_0000_1100_1110)
        #expect(QRCode.formatBits(level: .low, mask: 0) == 0b111_0111_1100_0100)
        #expect(QRCode.formatBits(level: .high, mask: 7) == 0b000_1000_0011_1011)
        let codes = QRCode.ErrorCorrection.allCases.flatMap { level in (0..<8).map { QRCode.formatBits(level: level, mask: $0) } }
        #expect(Set(codes).count == 32)
        for (i, a) in codes.enumerated() {
            for b in codes[(i + 1)...] { #expect((a ^ b).nonzeroBitCount >= 7) }
        }
    }

    @Test("version information: the standard's example (version 7) and a code at distance 8 from every other")
    func versionInformation() {
        #expect(QRCode.versionBits(7) == 0b000111_110010010100)
        #expect(QRCode.versionBits(40) == 0x28C69)
        let codes = (7...40).map(QRCode.versionBits)
        for (i, a) in codes.enumerated() {
            #expect(a >> 12 == i + 7)
            for b in codes[(i + 1)...] { #expect((a ^ b).nonzeroBitCount >= 8) }
        }
    }

    @Test("capacities of the standard's tables 1 and 7: modules, codewords, bytes per version and level")
    func capacities() {
        #expect([1, 2, 3, 7, 14, 40].map { QRCode.dataModules(version: $0) } == [208, 359, 567, 1568, 4651, 29648])
        #expect([1, 2, 7, 10, 40].map { QRCode.totalCodewords(version: $0) } == [26, 44, 196, 346, 3706])
        let bytes: [(Int, [Int])] = [(1, [17, 14, 11, 7]), (2, [32, 26, 20, 14]), (7, [154, 122, 86, 64]), (10, [271, 213, 151, 119]), (40, [2953, 2331, 1663, 1273])]
        for (version, expected) in bytes {
            #expect(QRCode.ErrorCorrection.allCases.map { QRCode.capacity(version: version, level: $0) } == expected, "version \(version)")
        }
        for level in QRCode.ErrorCorrection.allCases {
            let all = (1...40).map { QRCode.capacity(version: $0, level: level) }
            #expect(all == all.sorted() && Set(all).count == 40, "capacities grow with the version")
        }
    }

    // MARK: Choice of version, refusal, no trap

    @Test("the smallest version that holds the text, at every boundary")
    func versions() throws {
        #expect(QRCode.version(forByteCount: 0) == 1)
        #expect(QRCode.version(forByteCount: 14) == 1)
        #expect(QRCode.version(forByteCount: 15) == 2)
        #expect(QRCode.version(forByteCount: 2331) == 40)
        #expect(QRCode.version(forByteCount: 2332) == nil)
        #expect(QRCode.version(forByteCount: 2331, eci: true) == nil)
        for level in QRCode.ErrorCorrection.allCases {
            for version in 1...40 {
                let fits = QRCode.capacity(version: version, level: level)
                #expect(QRCode.version(forByteCount: fits, level: level) == version)
                #expect(QRCode.version(forByteCount: fits + 1, level: level) == (version < 40 ? version + 1 : nil))
            }
        }
        // Encoded at the boundaries of a few versions, the symbol has the version's size.
        for version in [1, 2, 6, 7, 9, 10, 14, 27] {
            let fits = QRCode.capacity(version: version, level: .medium)
            for (length, expected) in [(fits, version), (fits + 1, version + 1)] {
                let symbol = try QRCode.encode(String(repeating: "a", count: length))
                #expect(symbol.version == expected && symbol.size == 4 * expected + 17 && symbol.level == .medium)
            }
        }
    }

    @Test("an otpauth URI takes a small version; one of 300 bytes still fits")
    func otpauthVersions() throws {
        let uri = "otpauth://totp/Colony:user@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Colony&algorithm=SHA1&digits=6&period=30"
        #expect(try QRCode.encode(uri).version == 8)  // 126 bytes: 49 × 49 modules
        let long = "otpauth://totp/\(String(repeating: "I", count: 100)):\(String(repeating: "u", count: 60))%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=\(String(repeating: "I", count: 50))&algorithm=SHA1&digits=6&period=30"
        #expect(long.utf8.count >= 300)
        #expect(try QRCode.encode(long).version == QRCode.version(forByteCount: long.utf8.count))
    }

    @Test("text longer than version 40 holds is refused with an error, never a trap")
    func refusal() throws {
        let tenKB = String(repeating: "x", count: 10_240)
        #expect(throws: QRCode.TooLong(byteCount: 10_240, limit: 2331)) { try QRCode.svg(tenKB) }
        #expect(throws: QRCode.TooLong.self) { try QRCode.svgDataURI(String(repeating: "é", count: 5_000)) }
        #expect(throws: QRCode.TooLong.self) { try QRCode.encode(String(repeating: "x", count: 1274), level: .high) }
        // UTF-8 costs an ECI header: 2330 bytes of it fit, 2331 do not.
        #expect(throws: QRCode.TooLong(byteCount: 2331, limit: 2330)) { try QRCode.svg("é" + String(repeating: "x", count: 2329)) }
        #expect(try QRCode.encode("é" + String(repeating: "x", count: 2328)).version == 40)
        #expect(try QRCode.encode(String(repeating: "x", count: 2331)).version == 40)
    }

    @Test("no trap on any input: empty, controls, NUL, emoji, lone combining marks, invalid masks")
    func noTrap() throws {
        for text in ["", "\0", "\u{1}\u{7F}\r\n", "👩‍👩‍👧‍👦", "\u{301}", "日本語のテキスト", String(repeating: "\u{10FFFF}", count: 100), "<svg>\"'&#%"] {
            let svg = try QRCode.svg(text)
            #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>"))
        }
        // Random texts: a symbol of the smallest version that holds them, or TooLong exactly past version 40.
        var random = QRSeededRandom(seed: 18004)
        for round in 0..<220 {
            let ascii = random.below(2) == 0
            let length = round < 200 ? random.below(ascii ? 400 : 120) : (ascii ? 2320 : 575) + random.below(20)
            let scalars = (0..<length).compactMap { _ in UnicodeScalar(UInt32(ascii ? random.below(128) : random.below(0x11_0000))) }
            let text = String(String.UnicodeScalarView(scalars))
            let bytes = text.utf8.count
            let eci = text.utf8.contains { $0 >= 0x80 }
            if let version = QRCode.version(forByteCount: bytes, eci: eci) {
                let symbol = try QRCode.encode(text)
                #expect(symbol.version == version && (version == 1 || QRCode.capacity(version: version - 1, level: .medium, eci: eci) < bytes))
                #expect(symbol.svg.hasSuffix("\"/></svg>"))
            } else {
                #expect(throws: QRCode.TooLong(byteCount: bytes, limit: QRCode.capacity(version: 40, level: .medium, eci: eci))) { try QRCode.svg(text) }
            }
        }
        // A forced mask out of range falls back to the scored choice.
        #expect(try QRCode.encode("a", mask: 99) == QRCode.encode("a"))
        #expect(try QRCode.encode("a", mask: -1) == QRCode.encode("a"))
    }

    // MARK: The symbol and its SVG

    @Test("the symbol's fixed patterns, the SVG's form and the data URI GoTrue's clients show")
    func symbolAndSVG() throws {
        let symbol = try QRCode.encode("otpauth://totp/Colony:a@b.c?secret=JBSWY3DPEHPK3PXP")
        let n = symbol.size
        for (top, left) in [(0, 0), (0, n - 7), (n - 7, 0)] {
            for dr in -1...7 {
                for dc in -1...7 {
                    let ring = max(abs(dr - 3), abs(dc - 3))
                    #expect(symbol.isDark(row: top + dr, column: left + dc) == (ring != 2 && ring != 4), "finder at \(top),\(left)")
                }
            }
        }
        for i in 8..<(n - 8) {
            #expect(symbol.isDark(row: 6, column: i) == (i % 2 == 0) && symbol.isDark(row: i, column: 6) == (i % 2 == 0), "timing at \(i)")
        }
        #expect(symbol.isDark(row: n - 8, column: 8), "the dark module")
        #expect(!symbol.isDark(row: -1, column: 0) && !symbol.isDark(row: n, column: n), "outside is the light quiet zone")

        let svg = symbol.svg
        let side = n + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(side * 4)\" height=\"\(side * 4)\" viewBox=\"0 0 \(side) \(side)\" shape-rendering=\"crispEdges\">"))
        #expect(svg.components(separatedBy: "<path").count == 2, "one path")
        #expect(svg.contains("M4 4h7v1h-7z"), "the top-left finder's first row, inside the quiet zone")
        #expect(!svg.contains("#") && !svg.contains("%"), "safe unescaped in a data URI")
        let text = "otpauth://totp/Colony:a@b.c?secret=JBSWY3DPEHPK3PXP"
        #expect(try QRCode.svg(text) == svg)
        #expect(try QRCode.svgDataURI(text) == "data:image/svg+xml;utf-8," + svg)
        // Every mask gives a different symbol of the same text; the chosen one is stable.
        let masked = try (0..<8).map { try QRCode.encode(text, mask: $0) }
        #expect(Set(masked.map(\.svg)).count == 8 && masked.map(\.mask) == Array(0..<8))
        #expect(masked.contains(symbol))
    }

    // MARK: Decoded by a real decoder

    @Test("a few hundred codes (otpauth URIs, ASCII, Unicode; every level, every mask, versions 1 to 40) decode with zxing-cpp, also with modules damaged")
    func decodedByZXing() async throws {
        var random = QRSeededRandom(seed: 34)
        var cases: [[String: Any]] = []
        func add(_ text: String, level: QRCode.ErrorCorrection = .medium, mask: Int? = nil) throws {
            let symbol = try QRCode.encode(text, level: level, mask: mask)
            let svg = level == .medium && mask == nil ? try QRCode.svg(text) : symbol.svg
            cases.append(["text": text, "svg": svg, "version": symbol.version, "level": ["L", "M", "Q", "H"][level.rawValue], "mask": symbol.mask])
        }
        let base32 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        let unreserved = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        func word(_ length: Int) -> String { String((0..<length).map { _ in unreserved[random.below(unreserved.count)] }) }
        // otpauth URIs as the MFA enrolment makes them, of various issuer, account and secret lengths.
        for _ in 0..<150 {
            let issuer = word(1 + random.below(60))
            let account = "\(word(1 + random.below(40)))%40\(word(1 + random.below(20))).com"
            let secret = String((0..<(16 + random.below(3) * 8)).map { _ in base32[random.below(32)] })
            try add("otpauth://totp/\(issuer):\(account)?algorithm=SHA1&digits=6&issuer=\(issuer)&period=30&secret=\(secret)")
        }
        // Printable ASCII and arbitrary Unicode scalars of random lengths.
        for _ in 0..<60 {
            try add(String((0..<(1 + random.below(400))).map { _ in Character(UnicodeScalar(UInt8(32 + random.below(95)))) }))
        }
        for _ in 0..<40 {
            let scalars = (0..<(1 + random.below(80))).compactMap { _ in UnicodeScalar(UInt32(1 + random.below(0x2FFFF))) }
            try add(String(String.UnicodeScalarView(scalars)))
        }
        // Each level with each forced mask, and large versions up to 40.
        for level in QRCode.ErrorCorrection.allCases {
            for mask in 0..<8 { try add(word(10 + random.below(100)), level: level, mask: mask) }
        }
        for length in [700, 1200, 1800, 2331] { try add(word(length)) }
        try add("")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-cases-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: cases).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try await PythonClient.run([PythonClient.path("Tests/ColonyPlatformTests/qr_decode_check.py"), file.path], environment: [:])
        #expect(status == 0, "\(output)")
        #expect(output.contains("decoded \(cases.count) of \(cases.count) QR cases"), "\(output)")
    }
}

/// SplitMix64: the same cases on every run, without global state.
struct QRSeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound (bound > 0).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
