// An I Believe In You journey through the running stack with the generated client, as an iOS app
// would drive it: sign-up through auth (the app's supabase-swift AuthClient; plain URLSession
// here), then projects and notifications through ProjectsAPI and NotificationsAPI, with the
// token supplied per request. scripts/e2e runs it against scripts/run's gateway:
//   COLONY_GATEWAY_URL (http://127.0.0.1:8080), COLONY_API_KEYS_FILE (.local/api-keys.txt)
import ColonyClient
import Foundation
import NotificationsAPI
import ProjectsAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct JourneyFailure: Error, CustomStringConvertible {
    var description: String
}

func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    guard condition else { throw JourneyFailure(description: what()) }
}

let environment = ProcessInfo.processInfo.environment
let gateway = URL(string: environment["COLONY_GATEWAY_URL"] ?? "http://127.0.0.1:8080")!
let keysFile = environment["COLONY_API_KEYS_FILE"] ?? ".local/api-keys.txt"
/// The app's anon key from scripts/run's key file (lines `<app> <role> <key>`).
func anonKey(of app: String, in file: String) -> String? {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ").map(String.init)
        if fields.count == 3, fields[0] == app, fields[1] == "anon" { return fields[2] }
    }
    return nil
}
guard let anonKey = anonKey(of: "ibelieveinyou", in: keysFile) else {
    print("client journey: no ibelieveinyou anon key in \(keysFile)")
    exit(1)
}

/// Email + password sign-up (I Believe In You confirms at once): the session's access token.
func signUp(_ name: String) async throws -> String {
    var request = URLRequest(url: gateway.appendingPathComponent("auth/v1/signup"))
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue(anonKey, forHTTPHeaderField: "apikey")
    let email = "client-\(UUID().uuidString.prefix(12).lowercased())@example.com"
    request.httpBody = try JSONSerialization.data(withJSONObject: ["email": email, "password": "Pw-\(UUID().uuidString)", "data": ["full_name": name]])
    let (data, response) = try await URLSession.shared.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 200,
          let session = try JSONSerialization.jsonObject(with: data) as? [String: Any], let token = session["access_token"] as? String else {
        throw JourneyFailure(description: "sign-up failed: \(String(decoding: data, as: UTF8.self))")
    }
    return token
}

/// The two apps' users: each client gets its user's token per request, as from `supabase.auth.session`.
func connection(_ token: String) -> ColonyConnection {
    ColonyConnection(gateway: gateway, apiKey: anonKey) { token }
}

let started = Date()
do {
    let creatorToken = try await signUp("Cora Creator")
    let creatorProjects = ProjectsAPI.Client(connection(creatorToken))
    let creatorInbox = NotificationsAPI.Client(connection(creatorToken))
    let fan = ProjectsAPI.Client(connection(try await signUp("Finn Fan")))

    // The creator's phone registers for pushes (a 64-hex-digit APNs token).
    let device = try await creatorInbox.registerDevice(body: .json(.init(token: String(repeating: "ab", count: 32), environment: .sandbox, platform: .ios,
                                                                         appVersion: "1.0 (1)", locale: "en-US"))).ok.body.json
    try check(device.app == "ibelieveinyou", "device registered for \(device.app)")

    // A project and its first post.
    let title = "Client Garden Robot \(UUID().uuidString.prefix(6))"
    let project = try await creatorProjects.createProject(body: .json(.init(title: title, tagline: "Waters plants", mood: .green))).created.body.json
    try check(project.isPublished && project.followerCount == 0, "new project: \(project)")
    let post = try await creatorProjects.createPost(path: .init(projectId: project.id), body: .json(.init(content: "First prototype works!"))).created.body.json

    // A fan finds it by its slug, follows, likes and sends support: karma 5 + 1 + 10.
    let seen = try await fan.getProjectBySlug(path: .init(slug: project.publicSlug)).ok.body.json
    try check(seen.id == project.id && !seen.isFollowing, "by slug: \(seen)")
    let follow = try await fan.followProject(path: .init(projectId: project.id)).ok.body.json
    try check(follow.following && follow.followerCount == 1 && follow.karmaEarned == 5, "follow: \(follow)")
    let like = try await fan.likePost(path: .init(postId: post.id)).ok.body.json
    try check(like.liked && like.likeCount == 1 && like.karmaEarned == 1, "like: \(like)")
    let sent = try await fan.sendSupportMessage(path: .init(projectId: project.id), body: .json(.init(message: "You've got this!"))).created.body.json
    try check(sent.karmaEarned == 10 && sent.karma.totalPoints == 16, "support: \(sent)")
    let karma = try await fan.getKarma().ok.body.json
    try check(karma.totalPoints == 16 && karma.level == 1 && karma.nextLevelAt == 51, "karma: \(karma)")
    // Dates come back with their fractional seconds.
    try check(abs(karma.updatedAt.timeIntervalSinceNow) < 600, "karma updated_at \(karma.updatedAt)")
    let stats = try await fan.getSupportStats().ok.body.json
    try check(stats.projectsSupported == 1 && stats.messagesSent == 1 && stats.postsLiked == 1, "stats: \(stats)")

    // The creator hears about the support message (through Kafka: wait up to 30 s).
    let deadline = Date().addingTimeInterval(30)
    var kinds: [String] = []
    while Date() < deadline {
        let page = try await creatorInbox.listNotifications(query: .init(limit: 100)).ok.body.json
        kinds = page.notifications.map(\.kind)
        if kinds.contains("support_message") && kinds.contains("new_follower") { break }
        try await Task.sleep(for: .milliseconds(250))
    }
    try check(kinds.contains("support_message") && kinds.contains("new_follower"), "creator's notifications: \(kinds)")

    // A rule the document states, refused with the documented error: support for one's own project.
    let own = try await creatorProjects.sendSupportMessage(path: .init(projectId: project.id), body: .json(.init(message: "go me")))
    guard case .forbidden(let refusal) = own, case .json(let error) = refusal.body, error.code == "own_project" else {
        throw JourneyFailure(description: "support for one's own project: \(own)")
    }
    print(String(format: "client journey: I Believe In You through ProjectsAPI and NotificationsAPI passed in %.1fs", Date().timeIntervalSince(started)))
    print("client journey: 1 passed, 0 failed")
} catch {
    print("client journey failed: \(error)")
    print("client journey: 0 passed, 1 failed")
    exit(1)
}
