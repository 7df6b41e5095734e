import ColonyModels
import ColonyPlatform
import Foundation

// Reports to MyCirclee's moderators: what can be reported and how it is removed is
// `CirclesReportables`; `ReportDesk` files it (404 unseen, 403 own, 409 open already, 429 quota).
extension CirclesAPI {
    func createReport(_ input: Operations.CreateReport.Input) async throws -> Operations.CreateReport.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let filed = try await database.callerWrite { caller, connection in
            try await reports.file(objectType: body.objectType.rawValue, objectId: body.objectId, category: body.category.rawValue, words: body.words,
                                  by: caller.id, on: connection)
        }
        return .created(.init(body: .json(.init(filed))))
    }
}

extension Components.Schemas.Report {
    init(_ report: FiledReport) {
        self.init(id: report.id.lowercased, objectType: report.objectType, objectId: report.objectId.lowercased,
                  category: CategoryPayload(rawValue: report.category.rawValue) ?? .other, words: report.words,
                  status: StatusPayload(rawValue: report.status) ?? .open, createdAt: report.createdAt)
    }
}
