import ColonyModels
import ColonyTesting
import Foundation
import Testing
@testable import CirclesService

@Suite("Circles: hand-written JSON")
struct CirclesJSONTests {
    @Test("a feed page and its cards (the document's types) are written byte for byte as ColonyJSON's encoder writes them")
    func feedPage() throws {
        let tricky = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{7} nul \u{0} esc \u{1B} é 日本 🚀 \u{2028} end"
        let created = Date(timeIntervalSince1970: 1_790_000_000.123)
        func post(_ type: Components.Schemas.PostType, full: Bool) -> PostView {
            PostView(
                id: UUID.timeOrdered().lowercased, circleId: UUID().lowercased, authorId: UUID().lowercased,
                author: .init(userId: UUID().lowercased, displayName: tricky, handle: "h/andle"),
                _type: type, body: tricky, mood: full ? "happy" : nil, category: full ? "ride" : nil, urgency: full ? .urgent : nil,
                location: full ? "Place \"1\"" : nil, latitude: full ? 40.7128 : nil, longitude: full ? -74 : nil, startsAt: full ? created.addingTimeInterval(3600) : nil,
                photoUrl: full ? "https://files.example/p/1?token=a&v=2" : nil, expiresAt: created.addingTimeInterval(86_400), createdAt: created,
                updatedAt: created.addingTimeInterval(0.5),
                reactions: full ? [.init(emoji: "❤️", count: 3, reactedByMe: true), .init(emoji: "👍", count: 1, reactedByMe: false)] : [],
                pollOptions: type == .poll ? (full ? [.init(id: UUID().lowercased, label: tricky, votes: 12, votedByMe: true),
                                                      .init(id: UUID().lowercased, label: "b", votes: 0, votedByMe: false)] : []) : nil,
                rsvps: type == .event ? .init(going: 4, maybe: 1, declined: 0, mine: full ? .maybe : nil) : nil,
                keptByMe: full)
        }
        var cards: [PostView] = []
        for type in Components.Schemas.PostType.allCases { for full in [true, false] { cards.append(post(type, full: full)) } }
        for page in [FeedPage(posts: [], nextCursor: nil), FeedPage(posts: cards, nextCursor: "1790000000123000_0192a7d6-0000-7000-8000-000000000001")] {
            let difference = try writerDifference(page)
            #expect(difference == nil, "\(difference ?? "")")
        }
        for card in cards {
            #expect(try writerDifference(card) == nil)
        }
    }
}

@Suite("Circles: card aggregates")
struct AggregateTextTests {
    @Test("aggregates read back with colons in the free text, and refuse what the statement never writes")
    func aggregates() throws {
        let reaction = try AggregateText.reaction("12:1:a:b:c")
        #expect(reaction.count == 12 && reaction.mine && reaction.emoji == "a:b:c")
        #expect(try AggregateText.reaction("1:0:").emoji == "")
        let id = UUID()
        let option = try AggregateText.option("3:0:\(id.uuidString.lowercased()):Pick: this one")
        #expect(option.votes == 3 && !option.mine && option.id == id && option.label == "Pick: this one")
        let rsvps = try AggregateText.rsvps("4:1:0:")
        #expect(rsvps.going == 4 && rsvps.maybe == 1 && rsvps.declined == 0 && rsvps.mine == nil)
        #expect(try AggregateText.rsvps("0:0:2:declined").mine == "declined")
        for bad in ["", "x:1:e", "1:2:e", "1:1"] { #expect(throws: AggregateText.Malformed.self) { try AggregateText.reaction(bad) } }
        #expect(throws: AggregateText.Malformed.self) { try AggregateText.option("1:1:not-a-uuid:l") }
        #expect(throws: AggregateText.Malformed.self) { try AggregateText.rsvps("1:1:mine") }
    }

    @Test("a list reads back item by item, by bytes, colons and emoji in the items; a cut or unnumbered list is refused")
    func lists() throws {
        #expect(try AggregateText.list("") == [])
        #expect(try AggregateText.list("7:2:0:abc9:1:1:😀x") == ["2:0:abc", "1:1:😀x"])
        #expect(try AggregateText.list("0:3:a:b") == ["", "a:b"])
        for bad in ["7:2:0:ab", ":abc", "x:a", "3", "2:a"] {
            #expect(throws: AggregateText.Malformed.self) { try AggregateText.list(bad) }
        }
    }
}
