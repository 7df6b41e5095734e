import ColonyModels
import ColonyTesting
import Foundation
import Testing
@testable import ChatService

/// The history page's types, as the service has them (generated from its document).
private typealias Message = Components.Schemas.Message
private typealias Page = Components.Schemas.HistoryPage

@Suite("Chat: hand-written JSON")
struct ChatJSONTests {
    @Test("a history page and a message (the document's types) are written byte for byte as ColonyJSON's encoder writes them")
    func historyPage() throws {
        let tricky = writerSampleText
        let sent = Date(timeIntervalSince1970: 1_790_000_000.123)
        let text = Message(id: UUID.timeOrdered().lowercased, groupId: UUID().lowercased, content: tricky, sentBy: UUID().lowercased, sentAt: sent, isEdited: true,
                           messageType: .text, voiceDuration: nil, voiceUrl: nil, user: .init(id: UUID().lowercased, displayName: tricky),
                           cursor: "1790000000123000_0192a7d6-0000-7000-8000-000000000001")
        let voice = Message(id: UUID().lowercased, groupId: UUID().lowercased, content: "", sentBy: UUID().lowercased, sentAt: sent.addingTimeInterval(-86_400 * 400),
                            isEdited: false, messageType: .voice, voiceDuration: 12.75, voiceUrl: "https://files.example/voice/a/b?token=x&v=1",
                            user: .init(id: UUID().lowercased, displayName: "Ada"), cursor: nil)
        let whole = Message(id: UUID().lowercased, groupId: UUID().lowercased, content: "x", sentBy: UUID().lowercased, sentAt: Date(timeIntervalSince1970: 0), isEdited: false,
                            messageType: .voice, voiceDuration: 3, voiceUrl: nil, user: .init(id: UUID().lowercased, displayName: ""), cursor: nil)
        let pages = [
            Page(messages: [], hasMore: false, olderCursor: nil, newerCursor: nil),
            Page(messages: [text, voice, whole], hasMore: true, olderCursor: "1_00000000-0000-0000-0000-000000000000", newerCursor: tricky),
        ]
        for page in pages {
            let difference = try writerDifference(page)
            #expect(difference == nil, "\(difference ?? "")")
        }
        for message in [text, voice, whole] {
            #expect(try writerDifference(message) == nil)
        }
    }

    @Test("a voice duration that is not a number fails as the encoder fails")
    func notANumber() {
        let broken = Message(id: UUID().lowercased, groupId: UUID().lowercased, content: "", sentBy: UUID().lowercased, sentAt: Date(), isEdited: false,
                             messageType: .voice, voiceDuration: .nan, voiceUrl: nil, user: .init(id: UUID().lowercased, displayName: "A"), cursor: nil)
        #expect(throws: (any Error).self) { try ColonyJSON.encode(broken) }
        #expect(throws: (any Error).self) { try ColonyJSON.encoder().encode(broken) }
    }
}
