import ColonyModels
import ColonyPlatform
import Foundation
import Testing
@testable import ProjectsService

@Suite("Projects: rules without HTTP")
struct ProjectsRulesTests {
    @Test("the seed's karma table: points per action, levels with labels and emoji, boundaries 50/51, 200/201, 500/501, 1000/1001")
    func karmaLevels() {
        #expect(KarmaLevel.points(for: .follow) == 5)
        #expect(KarmaLevel.points(for: .message) == 10)
        #expect(KarmaLevel.points(for: .like) == 1)
        let expected: [(Int, Int, String, String)] = [
            (0, 1, "New Supporter", "🌱"), (50, 1, "New Supporter", "🌱"),
            (51, 2, "Supporter", "💚"), (200, 2, "Supporter", "💚"),
            (201, 3, "Super Supporter", "💜"), (500, 3, "Super Supporter", "💜"),
            (501, 4, "Champion", "⭐"), (1000, 4, "Champion", "⭐"),
            (1001, 5, "Legend", "👑"), (1_000_000, 5, "Legend", "👑"),
        ]
        for (points, level, label, emoji) in expected {
            let found = KarmaLevel.of(points: points)
            #expect(found.level == level && found.label == label && found.emoji == emoji, "\(points) points: \(found)")
        }
        #expect(KarmaLevel.of(points: -3).level == 1)
        #expect(KarmaLevel.numbered(5).next == nil && KarmaLevel.numbered(1).next?.minPoints == 51)
    }

    @Test("progress to the next level")
    func karmaProgress() {
        let start = KarmaLevel.progress(points: 0)
        #expect(start.nextLevelAt == 51 && start.pointsToNextLevel == 51 && start.progress == 0)
        let edge = KarmaLevel.progress(points: 50)
        #expect(edge.nextLevelAt == 51 && edge.pointsToNextLevel == 1)
        let second = KarmaLevel.progress(points: 51)
        #expect(second.nextLevelAt == 201 && second.pointsToNextLevel == 150 && second.progress == 0)
        let middle = KarmaLevel.progress(points: 126)
        #expect(middle.progress == 0.5)
        let legend = KarmaLevel.progress(points: 1001)
        #expect(legend.nextLevelAt == nil && legend.pointsToNextLevel == nil && legend.progress == 1)
    }

    @Test("who may do what on a project")
    func policy() {
        for action: ProjectPolicy.Action in [.view, .manage, .follow, .like] {
            #expect(ProjectPolicy.allows(isOwner: true, isPublished: true, action) && ProjectPolicy.allows(isOwner: true, isPublished: false, action))
        }
        #expect(!ProjectPolicy.allows(isOwner: true, isPublished: true, .support), "no supporting your own project")
        for action: ProjectPolicy.Action in [.view, .follow, .like, .support] {
            #expect(ProjectPolicy.allows(isOwner: false, isPublished: true, action))
        }
        #expect(!ProjectPolicy.allows(isOwner: false, isPublished: true, .manage))
        for action: ProjectPolicy.Action in [.view, .manage, .follow, .like, .support] {
            #expect(!ProjectPolicy.allows(isOwner: false, isPublished: false, action))
            #expect(throws: APIError.notFound("project not found", code: "project_not_found")) {
                try ProjectPolicy.require(isOwner: false, isPublished: false, action)
            }
        }
        #expect(throws: APIError.forbidden("only the project's owner can do that", code: "not_project_owner")) {
            try ProjectPolicy.require(isOwner: false, isPublished: true, .manage)
        }
        #expect(ProjectPolicy.karmaPoints(for: .follow, isOwner: false) == 5 && ProjectPolicy.karmaPoints(for: .follow, isOwner: true) == 0)
        #expect(ProjectPolicy.karmaPoints(for: .like, isOwner: false) == 1 && ProjectPolicy.karmaPoints(for: .like, isOwner: true) == 0)
    }

    @Test("slugs from titles: lowercase, URL-safe, accents folded, a suffix on collision")
    func slugs() throws {
        #expect(Slug.base(from: "Hello, Wörld! 2.0") == "hello-world-2-0")
        #expect(Slug.base(from: "  Café   Crème  ") == "cafe-creme")
        #expect(Slug.base(from: "🚀🚀🚀") == "project")
        #expect(Slug.base(from: "日本語") == "project")
        #expect(Slug.base(from: "--a--b--") == "a-b")
        let long = Slug.base(from: String(repeating: "word ", count: 40))
        #expect(long.count <= Slug.maxBaseLength && !long.hasSuffix("-") && Slug.isValid(long))
        #expect(Slug.base(from: String(repeating: "x", count: 200)).count == Slug.maxBaseLength)
        for title in ["Hello, Wörld! 2.0", "a", String(repeating: "abc ", count: 50), "???"] {
            let suffixed = Slug.withSuffix(Slug.base(from: title))
            #expect(Slug.isValid(suffixed) && suffixed.count <= Slug.maxLength, "\(suffixed)")
            #expect(suffixed.hasPrefix(Slug.base(from: title).prefix(10)))
            #expect(suffixed.split(separator: "-").last?.count == Slug.suffixLength)
        }
        #expect(Slug.withSuffix("x") != Slug.withSuffix("x"))
        for bad in ["", "-a", "a-", "a--b", "A", "a b", "a_b", "ä", String(repeating: "a", count: 81)] {
            #expect(!Slug.isValid(bad), "\(bad)")
        }
        #expect(try Slug.chosen(" My-Slug ") == "my-slug")
        #expect(throws: APIError.self) { try Slug.chosen("no spaces") }
    }

    @Test("input rules")
    func input() throws {
        var errors = ValidationErrors()
        #expect(ProjectsRules.websiteURL("example.com", errors: &errors) == "https://example.com")
        #expect(ProjectsRules.websiteURL("http://a.io/x?y=1", errors: &errors) == "http://a.io/x?y=1")
        #expect(ProjectsRules.websiteURL("", errors: &errors) == nil && errors.isEmpty)
        #expect(ProjectsRules.twitterHandle("@ada_l", errors: &errors) == "ada_l")
        #expect(ProjectsRules.twitterHandle("https://x.com/ada", errors: &errors) == "ada")
        #expect(ProjectsRules.twitterHandle("https://twitter.com/ada/", errors: &errors) == "ada")
        #expect(errors.isEmpty)
        for bad in ["ftp://a.io", "javascript:alert(1)", "not a url", "https://localhost"] {
            var e = ValidationErrors()
            _ = ProjectsRules.websiteURL(bad, errors: &e)
            #expect(!e.isEmpty, "\(bad)")
        }
        for bad in ["@", "has space", "way_too_long_handle_x", "ada!"] {
            var e = ValidationErrors()
            _ = ProjectsRules.twitterHandle(bad, errors: &e)
            #expect(!e.isEmpty, "\(bad)")
        }
        var titles = ValidationErrors()
        _ = ProjectsRules.title("   ", errors: &titles)
        _ = ProjectsRules.title(String(repeating: "t", count: 101), errors: &titles)
        #expect(titles.problems.count == 2)
        #expect(throws: APIError.self) { try ProjectsRules.supportMessage("  ") }
        #expect(throws: APIError.self) { try ProjectsRules.supportMessage(String(repeating: "m", count: 1001)) }
        #expect(ProjectsRules.likePattern("50%_off\\") == "%50\\%\\_off\\\\%")
    }

    @Test("the feed's hand-written JSON is byte for byte what ColonyJSON's encoder writes")
    func postPageJSON() throws {
        let tricky = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{7} nul \u{0} esc \u{1B} é 日本 🚀 \u{2028} end"
        let builder = BuilderCard(id: UUID().lowercased, userId: UUID().lowercased, name: tricky, avatarUrl: "https://x.io/a/b?v=1")
        let bare = BuilderCard(id: UUID().lowercased, userId: UUID().lowercased, name: "Plain", avatarUrl: nil)
        let date = Date(timeIntervalSince1970: 1_790_000_000.123)
        func post(_ builder: BuilderCard, cover: String?, images: [String], liked: Bool) -> Post {
            Post(id: UUID.timeOrdered().lowercased, projectId: UUID().lowercased, content: tricky, images: images, likeCount: 42, createdAt: date,
                 updatedAt: date.addingTimeInterval(0.5),
                 project: PostProject(id: UUID().lowercased, title: "T/\\itle", publicSlug: "slug-1", coverImageUrl: cover, builder: builder), likedByMe: liked)
        }
        for page in [
            PostPage(posts: [], nextCursor: nil),
            PostPage(posts: [post(builder, cover: "http://c/1", images: ["https://i/1", "https://i/\"2\""], liked: true), post(bare, cover: nil, images: [], liked: false)],
                     nextCursor: "1790000000123000_0192a7d6-0000-7000-8000-000000000001"),
        ] {
            let expected = try ColonyJSON.encoder().encode(page)
            let written = try ColonyJSON.encode(page)
            #expect(written == Array(expected), "\(String(decoding: written, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))")
        }
    }
}
