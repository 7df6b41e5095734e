import ProjectsService
import ColonyPlatform

// colony-projects: serves; everything it reads is in ProjectsLaunch.
await ServiceCommandLine.main(ServeCommand<ProjectsLaunch>.self)
