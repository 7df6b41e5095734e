import ColonyModels
import ColonyPlatform
import ColonyTesting
import ConsoleService
import Foundation
import Testing

/// The Overview page: each app's numbers and charts from the services' counts, through auth
/// running for real; the platform table; an operator's apps only.
@Suite("Console: the Overview shows each app's sign-ups, active users and content per day, and the platform")
struct ConsoleOverviewTests {
    /// The inline chart with this id on the page (`<figure id=…>` to its `</svg>`).
    static func chart(_ page: Browser.Page, _ id: String) -> String? {
        guard let start = page.body.range(of: "id=\"\(id)\""), let end = page.body.range(of: "</svg>", range: start.upperBound..<page.body.endIndex) else { return nil }
        return String(page.body[start.lowerBound..<end.upperBound])
    }

    @Test("sign-ups made through auth appear in today's bar of their app's chart; a sign-in makes an active user today and in 30 days; a service that does not answer is named and the page still answers")
    func signUpsAppearToday() async throws {
        // chat is configured on a port where nothing listens: the page names it and goes on.
        try await withRunningConsole(configure: { $0.serviceURLs = [.auth: $0.authURL, .chat: "http://127.0.0.1:1"] }) { console in
            let (owner, _) = try await console.operatorSignedIn("owner@example.com", role: .owner)
            let home = try await owner.get("/console/")
            #expect(home.status == 303 && home.location == "/console/overview", "\(home)")

            for email in ["first@example.com", "second@example.com"] { _ = try await console.user(email, app: .mycirclee) }
            _ = try await console.user("third@example.com", app: .unify)
            #expect(try await console.userSignIn("first@example.com", app: .mycirclee).status == 200)

            let page = try await owner.get("/console/overview")
            #expect(page.status == 200, "\(page)")
            let today = LocalDate.utcDay(of: Date()).description
            let mycirclee = try #require(Self.chart(page, "chart-mycirclee-signups"), "\(page.body)")
            #expect(mycirclee.contains("<title>\(today): 2</title>"), "\(mycirclee)")
            #expect(mycirclee.components(separatedBy: "<g class=\"day\">").count - 1 == 30, "a bar a day for 30 days")
            #expect(try #require(Self.chart(page, "chart-unify-signups")).contains("<title>\(today): 1</title>"))
            #expect(try #require(Self.chart(page, "chart-habithive-signups")).contains("<title>\(today): 0</title>"))
            #expect(page.find(#"id="signups-mycirclee">(\d+)<"#) == "2")
            #expect(page.find(#"id="dau-mycirclee">(\d+)<"#) == "1" && page.find(#"id="mau-mycirclee">(\d+)<"#) == "1", "one user signed in today")
            #expect(page.find(#"id="dau-unify">(\d+)<"#) == "0" && page.find(#"id="mau-unify">(\d+)<"#) == "0")
            #expect(Self.chart(page, "chart-mycirclee-active_users")?.contains("<title>\(today): 1</title>") == true)

            // The platform: auth answers, chat does not; neither takes the page down.
            #expect(page.body.contains("id=\"missing-chat\""), "chat's counts are named missing")
            let authRow = try #require(page.find(#"(?s)id="platform-auth">(.*?)</tr>"#))
            #expect(authRow.contains(">ready<") && !authRow.contains("did not answer"), "\(authRow)")
            let chatRow = try #require(page.find(#"(?s)id="platform-chat">(.*?)</tr>"#))
            #expect(chatRow.contains("not ready") && chatRow.contains("did not answer"), "\(chatRow)")
            // No script, no inline style: the page's policy allows neither.
            #expect(!page.body.contains("<script") && !page.body.contains("style="))
            #expect(page.headers.first(name: "Content-Security-Policy") == ConsolePages.contentSecurityPolicy)
            #expect(page.body.contains(#"<a href="/console/overview" aria-current="page">Overview</a>"#))
        }
    }

    @Test("an operator of one app sees only that app and is refused another's; a viewer sees the page and the platform; a moderator the apps without the platform")
    func onlyTheOperatorsApps() async throws {
        try await withRunningConsole(configure: { $0.serviceURLs = [.auth: $0.authURL] }) { console in
            _ = try await console.user("someone@example.com", app: .unify)
            let (support, _) = try await console.operatorSignedIn("support@example.com", role: .support, apps: [.unify])
            let page = try await support.get("/console/overview")
            #expect(page.status == 200, "\(page)")
            #expect(page.body.contains("id=\"app-unify\""))
            for other in App.allCases where other != .unify {
                #expect(!page.body.contains("id=\"app-\(other.rawValue)\"") && !page.body.contains("chart-\(other.rawValue)-"), "\(other) is not theirs")
            }
            #expect(page.find(#"id="signups-unify">(\d+)<"#) == "1")
            #expect(!page.body.contains("All apps"), "no choice of apps for one app")
            #expect(try await support.get("/console/overview?app=mycirclee").status == 403)
            #expect(try await support.get("/console/overview?app=nope").status == 404)
            #expect(try await support.get("/console/overview?app=unify").status == 200)

            let (viewer, _) = try await console.operatorSignedIn("viewer@example.com", role: .viewer)
            let viewed = try await viewer.get("/console/overview")
            #expect(viewed.status == 200, "\(viewed)")
            for app in App.allCases { #expect(viewed.body.contains("id=\"app-\(app.rawValue)\"")) }
            #expect(viewed.body.contains("id=\"platform\"") && viewed.body.contains("All apps"))
            let one = try await viewer.get("/console/overview?app=unify")
            #expect(one.body.contains("id=\"app-unify\"") && !one.body.contains("id=\"app-mycirclee\""))
            #expect(one.body.contains(#"<a href="/console/overview?app=unify" aria-current="page">Unify</a>"#))

            let (moderator, _) = try await console.operatorSignedIn("moderator@example.com", role: .moderator)
            let moderated = try await moderator.get("/console/overview")
            #expect(moderated.status == 200 && moderated.body.contains("id=\"app-mycirclee\"") && !moderated.body.contains("id=\"platform\""), "\(moderated)")
        }
    }
}

@Suite("Console: server-drawn SVG charts")
struct SVGChartTests {
    @Test("every text is escaped: the title, the labels and the tooltips cannot open a tag or an attribute")
    func escaping() {
        let hostile = #"<script>alert("x")</script> & 'quote'"#
        let chart = SVGChart(title: hostile, points: [SVGChart.Point(label: hostile, count: 3), SVGChart.Point(label: "b\u{1}c", count: 1)])
        let svg = chart.svg
        #expect(!svg.contains("<script") && !svg.contains("alert(\"x\")") && !svg.contains("'quote'"))
        #expect(svg.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;quote&apos;"))
        #expect(svg.contains("<title>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;quote&apos;: 3</title>"))
        #expect(svg.contains("<title>bc: 1</title>"), "a control character is left out")
        #expect(SVGChart.escape("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&apos;f")
        #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>") && svg.components(separatedBy: "<svg").count == 2)
        #expect(svg.components(separatedBy: "<g ").count == svg.components(separatedBy: "</g>").count)
    }

    @Test("a series of zeros draws no bar and a scale of 0, without dividing by zero")
    func zeros() {
        let chart = SVGChart(title: "Posts", points: (1...7).map { SVGChart.Point(label: "day \($0)", count: 0) })
        #expect(chart.maximum == 0)
        let svg = chart.svg
        #expect(svg.components(separatedBy: "<rect class=\"bar\"").count - 1 == 7)
        #expect(svg.components(separatedBy: "height=\"0\"").count - 1 == 7, "every bar is flat")
        #expect(!svg.contains("nan") && !svg.contains("inf"))
        #expect(svg.contains(">0</text>"))
        #expect(!SVGChart(title: "None", points: []).svg.contains("<rect"))
    }

    @Test("thirty days: a bar and a tooltip each, the tallest the full height, the first and last days under the axis, the largest count beside it")
    func thirtyDays() throws {
        let first = try #require(LocalDate("2026-10-30"))
        let points = (0..<30).map { SVGChart.Point(label: first.adding(days: $0).description, count: Int64($0 % 7)) }
        let chart = SVGChart(title: "Sign-ups", points: points, width: 600, height: 170)
        let svg = chart.svg
        #expect(chart.maximum == 6)
        #expect(svg.components(separatedBy: "<g class=\"day\">").count - 1 == 30)
        for point in points { #expect(svg.contains("<title>\(point.label): \(point.count)</title>")) }
        #expect(svg.contains(">2026-10-30</text>") && svg.contains(">2026-11-28</text>"))
        #expect(svg.contains(">6</text>"), "the largest count on the scale")
        // The plot is 170 - 10 - 24 = 136 high: a count of 6 is a full bar, 3 half of it.
        #expect(svg.contains("height=\"136\" fill=\"rgb(47,91,211)\"") && svg.contains("height=\"68\" fill=\"rgb(47,91,211)\""))
        #expect(svg.contains(#"viewBox="0 0 600 170""#))
    }
}
