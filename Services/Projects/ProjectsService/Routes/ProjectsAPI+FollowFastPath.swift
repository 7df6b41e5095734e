import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

// Following a project (`POST /projects/v1/projects/{project_id}/follow`), the write ProjectsBench
// measures, served by hand: it has no body, and beside its one short transaction the runtime's
// per-request machinery (its middleware chain, the answer written by Foundation's JSONEncoder)
// kept it under its target (issue 35.1). The fast path reads a plain bodiless request (`PlainRequest`: no body,
// `Accept` absent or plainly JSON, the id of unreserved characters) as the generated code does,
// calls the same `followProject` and writes its `FollowState` with `ColonyJSON`'s tree; anything
// else goes to the generated route (ProjectsFastPathTests holds the answers byte-equal).
extension ProjectsAPI {
    static let followPath = "/projects/v1/projects/{project_id}/follow"

    /// No ServerMiddleware but `RequestBodyCheck` acts on `followProject`, and it passes a request
    /// without a body unchanged: the only kind read here.
    var followFastPath: GeneratedFastPath {
        GeneratedFastPath(.post, Self.followPath) { request, context, generated in
            // The operation reads no query: items are ignored, as the generated code ignores them.
            guard let plain = PlainRequest(request, context, parameter: "project_id", query: []) else {
                return try await generated.respond(to: request, context: context)
            }
            let output = try await followProject(.init(path: .init(projectId: plain.parameter)))
            guard case .ok(let ok) = output, case .json(let state) = ok.body else { throw APIError.internalError }
            return try GeneratedFastPath.json(encoding: state)
        }
    }
}
