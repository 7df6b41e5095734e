import Foundation
@testable import ProjectsService
import Testing

@Suite("I Believe In You import rules")
struct ProjectsImportRulesTests {
    @Test("a milestone is completed exactly when is_completed says so; a left-over completed_at is dropped")
    func milestoneCompletion() {
        let created = Date(timeIntervalSince1970: 1_700_000_000), done = created.addingTimeInterval(86_400)
        #expect(SupabaseProjectsImport.completion(isCompleted: false, completedAt: done, createdAt: created) == nil)
        #expect(SupabaseProjectsImport.completion(isCompleted: true, completedAt: done, createdAt: created) == done)
        #expect(SupabaseProjectsImport.completion(isCompleted: true, completedAt: nil, createdAt: created) == created)
        #expect(SupabaseProjectsImport.completion(isCompleted: false, completedAt: nil, createdAt: created) == nil)
    }
}
