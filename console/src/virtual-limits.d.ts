/** The limits of the routes' schemas, made when the console is built (console/vite.config.ts). */
declare module 'virtual:limits' {
  const limits: import('../../scripts/console-limits').ConsoleLimits;
  export default limits;
}
