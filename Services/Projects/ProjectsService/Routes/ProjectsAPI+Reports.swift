import ColonyModels
import ColonyPlatform
import Foundation

// Reports: a user reports a project, post, support message or builder they can see
// (`ProjectsReportables`); the platform's `ReportDesk` does the rest.
extension ProjectsAPI {
    func createReport(_ input: Operations.CreateReport.Input) async throws -> Operations.CreateReport.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let filed = try await database.callerWrite { caller, connection in
            _ = try await builders.require(caller.id, on: connection)
            return try await reportDesk.file(objectType: body.objectType.rawValue, objectId: body.objectId, category: body.category.rawValue, words: body.words,
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
