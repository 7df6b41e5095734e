import ChatAPI
import ChatService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import Testing

/// The fast paths of the history page and of sending a text message (`ChatAPI+HistoryFastPath.swift`)
/// answer every request, good or bad, exactly as the generated routes do: the same requests to the
/// service and to a twin on the same data with `COLONY_FAST_PATHS=off` get the same status,
/// `Content-Type` and body bytes (a new message's id, cursor and time compared by shape).
@Suite("Chat: the fast paths of the history page and of sending")
struct ChatFastPathTests {
    @Test("history pages, good and bad requests: the fast path's answers are the generated route's, byte for byte")
    func historyPageEqualsGenerated() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user(), stranger = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let quiet = try await chat.group(owner: owner, name: "Quiet")
            let api = chat.api(owner)
            // More than a default page: plain text, text that JSON must escape, a voice message, an edit.
            let tricky = "quote \" backslash \\ slash / newline \n tab \t é 日本 🚀 \u{2028} \u{7} end"
            var sent: [String] = []
            for index in 0..<56 {
                let content = index == 7 ? tricky : "message \(index)"
                sent.append(try await api.sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: content))).created.body.json.id)
            }
            _ = try await chat.api(member).sendVoiceMessage(path: .init(groupId: group.uuidString), query: .init(duration: 4.25, content: "listen / here"),
                                                            body: .audioMp4(upload(AudioFixtures.m4a))).created
            _ = try await api.editMessage(path: .init(groupId: group.uuidString, messageId: sent[3]), body: .json(.init(content: "edited"))).ok
            let page = try await api.listMessages(path: .init(groupId: group.uuidString), query: .init(limit: 20)).ok.body.json
            let older = try #require(page.olderCursor), newer = try #require(page.newerCursor), middle = try #require(page.messages[5].cursor)

            let messages = "/groups/\(group)/messages", lower = "/groups/\(group.lowercased)/messages"
            let requests: [(path: String, user: RunningService.User?, headers: [(String, String)])] = [
                // Pages: the newest (default limit, and others), before and after cursors, an empty group.
                (messages, owner, []), (lower, member, []), ("\(lower)?limit=20", owner, []), ("\(lower)?limit=1", owner, []), ("\(lower)?limit=200", owner, []),
                ("\(lower)?limit=007", owner, []), ("\(lower)?before=\(older)", owner, []), ("\(lower)?before=\(older)&limit=100", owner, []),
                ("\(lower)?after=\(middle)", owner, []), ("\(lower)?after=\(newer)", owner, []), ("\(lower)?limit=5&before=\(middle)&other=x", owner, []),
                ("/groups/\(quiet)/messages", owner, []), ("/groups/\(quiet)/messages?before=\(older)", owner, []),
                // Accept: plainly JSON, anything, or what the generated route reads itself.
                (lower, owner, [("Accept", "application/json")]), (lower, owner, [("Accept", "*/*")]), (lower, owner, [("Accept", "text/html")]),
                (lower, owner, [("Accept", "application/json, text/plain;q=0.5")]),
                // Bad limits.
                ("\(lower)?limit=0", owner, []), ("\(lower)?limit=201", owner, []), ("\(lower)?limit=-1", owner, []), ("\(lower)?limit=abc", owner, []),
                ("\(lower)?limit=", owner, []), ("\(lower)?limit=1.5", owner, []), ("\(lower)?limit=99999999999999999999", owner, []),
                ("\(lower)?limit=1&limit=2", owner, []), ("\(lower)?limit=%31", owner, []), ("\(lower)?limit", owner, []), ("\(lower)?limit=+5", owner, []),
                // Bad cursors.
                ("\(lower)?before=xyz", owner, []), ("\(lower)?after=1_2", owner, []), ("\(lower)?before=\(older)&after=\(newer)", owner, []),
                ("\(lower)?before=", owner, []), ("\(lower)?before=%00", owner, []), ("\(lower)?before=a%20b", owner, []), ("\(lower)?before=1&before=2", owner, []),
                ("\(lower)?&&before=\(older)", owner, []), ("\(lower)?before=\(older.uppercased())", owner, []),
                // Bad or foreign ids, no token, a stranger.
                ("/groups/not-a-uuid/messages", owner, []), ("/groups/\(UUID())/messages", owner, []), ("/groups/\(group.uuidString.uppercased())/messages", owner, []),
                ("/groups/\(group.lowercased.dropLast())%61/messages", owner, []), (lower, nil, []), (lower, stranger, []), ("\(lower)?before=xyz", stranger, []),
            ]
            try await withRunningTwin(of: chat.service, .chat, configure: { $0.fastPaths = .off; $0.maxUploadBytes = chat.settings.maxUploadBytes }, definition: { _ in
                ChatService.definition(settings: chat.settings, storage: chat.storage)
            }) { generated in
                var pages = 0
                for request in requests {
                    let fast = try await chat.service.request(.GET, request.path, as: request.user, headers: request.headers)
                    let reference = try await generated.request(.GET, request.path, as: request.user, headers: request.headers)
                    let described = "\(request.path) \(request.headers): fast \(fast.status) \(String(buffer: fast.bytes)) / generated \(reference.status) \(String(buffer: reference.bytes))"
                    #expect(fast.status == reference.status, "\(described)")
                    #expect(fast.status < 500, "\(described)")
                    #expect(fast.headers["Content-Type"] == reference.headers["Content-Type"], "\(described)")
                    #expect(fast.bytes == reference.bytes, "\(described)")
                    if fast.status == 200 { pages += 1 }
                }
                // The good requests are pages, with messages in them (the voice message, its URL, the escapes).
                #expect(pages >= 16)
                let whole = try await chat.service.request(.GET, "\(lower)?limit=200", as: owner)
                #expect(String(buffer: whole.bytes).contains("\"voice_url\":\"http"))
                #expect(whole.body["messages"]?.arrayValue?.count == 57)
            }
        }
    }

    @Test("sending a text message, good and bad bodies, callers, ids and headers: the fast path's answers are the generated route's")
    func sendingEqualsGenerated() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user(), stranger = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let messages = "/groups/\(group.lowercased)/messages"
            let bodies = [
                #"{"content":"hi"}"#,
                #"{"content":"escapes \" \\ / \n \t \u00e9 \ud83d\ude80 \u2028 \u0007 é 日本 🚀"}"#,
                #"{"content":"  kept as sent  ","unknown":{"x":[1,2]},"also":"y"}"#, #"{"also":1,"content":"keys in any order"}"#,
                "{\"content\":\"\(String(repeating: "é", count: 4000))\"}",
                // Refused by the document's types or the rules.
                "{\"content\":\"\(String(repeating: "a", count: 4001))\"}", #"{"content":""}"#, #"{"content":"  \n\t "}"#,
                #"{"content":5}"#, #"{"content":["x"]}"#, #"{"content":{"a":1}}"#, #"{"content":true}"#, #"{"content":null}"#,
                #"{"content":"null"}"#, #"{"Content":"x"}"#, #"{"content":"a\u0000b"}"#, #"{"content":"\udc00"}"#,
            ] + FastPathBodies.hostile(around: #"{"content":"hi"}"#, limit: ColonyRequestContext.defaultBodyLimit)
            let callers: [(RunningService.User?, String)] = [
                (owner, messages), (member, messages), (stranger, messages), (nil, messages), (owner, "/groups/\(UUID())/messages"),
                (owner, "/groups/not-a-uuid/messages"), (owner, "/groups/\(group.uuidString.uppercased())/messages"),
                (owner, "/groups/\(group.lowercased.dropLast())%61/messages"),
            ]
            let varying: Set<String> = ["id", "cursor", "sent_at"]
            try await withRunningTwin(of: chat.service, .chat, configure: { $0.fastPaths = .off; $0.maxUploadBytes = chat.settings.maxUploadBytes }, definition: { _ in
                ChatService.definition(settings: chat.settings, storage: chat.storage)
            }) { generated in
                var compared = 0
                for body in bodies {
                    for (user, path) in callers {
                        let difference = try await chat.service.differenceFromGenerated(.POST, path, as: user, body: body, generated: generated, varying: varying)
                        #expect(difference == nil, "\(difference ?? "")")
                        compared += 1
                    }
                }
                #expect(compared == callers.count * bodies.count)
                let note = #"{"content":"hi"}"#
                let variants: [(String?, [(String, String)], String)] = [
                    ("application/json; charset=utf-8", [], ""), ("application/json;charset=utf-8", [], ""), ("application/json; charset=UTF-8", [], ""),
                    ("application/JSON", [], ""), ("application/json; charset=latin1", [], ""), ("text/plain", [], ""),
                    ("application/x-www-form-urlencoded", [], ""), (nil, [], ""), ("application/json", [("Accept", "application/json")], ""),
                    ("application/json", [("Accept", "*/*")], ""), ("application/json", [("Accept", "text/html")], ""),
                    ("application/json", [("Accept", "application/json, text/plain;q=0.5")], ""), ("application/json", [("Accept", "application/*")], ""),
                    ("application/json", [], "?x=1"), ("application/json", [], "?"), ("application/json", [("Content-Type", "application/json")], ""),
                ]
                for (contentType, headers, query) in variants {
                    let difference = try await chat.service.differenceFromGenerated(.POST, messages + query, as: member, body: note, contentType: contentType,
                                                                                      headers: headers, generated: generated, varying: varying)
                    #expect(difference == nil, "\(contentType ?? "no type") \(headers) \(query): \(difference ?? "")")
                }
            }
            // Both instances sent each good body: the history shows them, whole.
            let history = try await chat.service.request(.GET, "\(messages)?limit=200", as: owner)
            let shown = history.body["messages"]?.arrayValue ?? []
            #expect(history.status == 200 && shown.count >= 2 * 5, "\(history.body)")
            #expect(shown.contains { $0["content"]?.stringValue == "escapes \" \\ / \n \t é 🚀 \u{2028} \u{7} é 日本 🚀" })
        }
    }
}
