import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// The pipeline: per service, readiness, the outbox backlog and its oldest row, consumer lag per
/// topic and partition, dead letters with their event (the payload only for roles that may see
/// personal data), and retry or drop (admins and owners), through each service's own routes.
struct PipelineRoutes {
    let web: ConsoleWeb
    let services: [PipelineClient]

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("pipeline", use: web.page(overview))
        group.post("pipeline/:service/dead-letters/:id/:action", use: web.page(act))
    }

    struct ServiceState: Sendable {
        var service: ColonyService
        var ready: Bool
        var pipeline: PipelineAdminRoutes.Pipeline?
        var deadLetters: [PipelineAdminRoutes.DeadLetter]
        var problem: String?
    }

    /// Every service's state, asked at once; a service that does not answer is shown as such.
    /// `listDeadLetters: false` (the Overview) asks for the counts only.
    func states(for actor: SignedInOperator, listDeadLetters: Bool = true) async -> [ServiceState] {
        let includePayload = actor.rights.allows(.viewPersonalData)
        return await withTaskGroup(of: ServiceState.self) { group in
            for client in services {
                group.addTask {
                    async let ready = client.isReady()
                    do {
                        let pipeline = try await client.pipeline(operatorEmail: actor.email)
                        let letters = listDeadLetters && pipeline.deadLetters.publish + pipeline.deadLetters.consume > 0
                            ? try await client.deadLetters(includePayload: includePayload, operatorEmail: actor.email) : []
                        return ServiceState(service: client.service, ready: await ready, pipeline: pipeline, deadLetters: letters)
                    } catch {
                        return ServiceState(service: client.service, ready: await ready, pipeline: nil, deadLetters: [], problem: "\(error)")
                    }
                }
            }
            var states: [ServiceState] = []
            for await state in group { states.append(state) }
            let order = ColonyService.allCases
            return states.sorted { (order.firstIndex(of: $0.service) ?? 0) < (order.firstIndex(of: $1.service) ?? 0) }
        }
    }

    @Sendable func overview(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        guard actor.rights.allows(.viewPipeline) else { throw ConsoleRefusal(.forbidden, "Your role does not show the pipeline.") }
        let canRetry = actor.rights.allows(.retryDeadLetters)
        var values = web.layout(actor, title: "Pipeline", section: "pipeline")
        values["services"] = await states(for: actor).map { state -> [String: Any] in
            var row: [String: Any] = ["service": state.service.rawValue, "ready": state.ready, "problem": state.problem ?? ""]
            if let pipeline = state.pipeline {
                row["answered"] = true
                row["broker_ok"] = pipeline.broker == "ok"
                row["outbox_pending"] = pipeline.outbox.pending
                row["outbox_oldest"] = pipeline.outbox.oldestPendingAt.map(ISO8601.format) ?? ""
                row["dead_publish"] = pipeline.deadLetters.publish
                row["dead_consume"] = pipeline.deadLetters.consume
                row["lag"] = pipeline.consumers.map { ["topic": $0.topic, "partition": $0.partition, "lag": $0.lag] }
                row["lag_total"] = pipeline.consumers.reduce(Int64(0)) { $0 + $1.lag }
            }
            row["has_dead_letters"] = !state.deadLetters.isEmpty
            row["dead_letters"] = state.deadLetters.map { letter -> [String: Any] in
                ["id": letter.id, "stage": letter.stage.rawValue, "event_type": letter.eventType ?? "(unreadable)", "event_id": letter.eventID?.lowercased ?? "",
                 "topic": letter.topic, "attempts": letter.attempts, "last_failed_at": ISO8601.format(letter.lastFailedAt), "error": letter.error,
                 "retry_requested": letter.retryRequestedAt != nil, "payload": letter.payload.map(ConsolePages.prettyJSON) ?? "", "can_retry": canRetry,
                 "service": state.service.rawValue]
            }
            return row
        }
        values["show_payloads"] = actor.rights.allows(.viewPersonalData)
        if let done = request.uri.queryParameters.get("done") { values["done"] = done == "retry" ? "Retry requested." : "Dropped." }
        return web.pages.render("pipeline", values)
    }

    @Sendable func act(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        _ = try await web.form(request, context, session: actor.session)
        guard let name = context.parameters.get("service"), let client = services.first(where: { $0.service.rawValue == name }),
              let id = context.parameters.get("id").flatMap({ Int64($0) }), let action = context.parameters.get("action"), ["retry", "drop"].contains(action)
        else { throw ConsoleRefusal(.notFound, "No such dead letter.") }
        let auditAction = action == "retry" ? "retry_dead_letter" : "drop_dead_letter"
        let target = "\(name)/\(id)"
        guard actor.rights.allows(.retryDeadLetters) else {
            try await web.operators.record(actor, action: auditAction, target: target, outcome: .refused, detail: "no right", ipAddress: nil)
            throw ConsoleRefusal(.forbidden, "Your role may not retry or drop dead letters.")
        }
        do {
            if action == "retry" { try await client.retry(id, operatorEmail: actor.email) } else { try await client.drop(id, operatorEmail: actor.email) }
        } catch let failure as ConsoleHTTP.Failure {
            try await web.operators.record(actor, action: auditAction, target: target, outcome: .failed, detail: failure.description, ipAddress: nil)
            throw ConsoleRefusal(failure.status == 404 ? .notFound : .unavailable, failure.status == 404 ? "That dead letter is gone." : "\(name) could not do it now.")
        }
        try await web.operators.record(actor, action: auditAction, target: target, outcome: .ok, ipAddress: nil)
        return ConsolePages.redirect("/console/pipeline?done=\(action)")
    }

}
