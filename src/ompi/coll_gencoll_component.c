/*
 * The component: its MCA parameters, derived from the algorithm table through
 * the core's C ABI (an algorithm the core gains appears here without an edit),
 * and the per-communicator query.
 */
#include "src/ompi/coll_gencoll.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ompi/runtime/mpiruntime.h>
#include <opal/mca/base/mca_base_var.h>
#include <opal/mca/base/mca_base_var_enum.h>
#include <opal/mca/base/mca_base_vari.h>

static int gencoll_register(void);
static int gencoll_close(void);

mca_coll_gencoll_component_t mca_coll_gencoll_component = {
    {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "gencoll",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION),
            .mca_register_component_params = gencoll_register,
            .mca_close_component = gencoll_close,
        },
        .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .collm_init_query = mca_coll_gencoll_init_query,
        .collm_comm_query = mca_coll_gencoll_comm_query,
    },
    .priority = 90,
};

/* Names, descriptions and enumerator values, built at registration (Open MPI
 * copies them; static storage keeps the builders simple). */
static mca_base_var_enum_value_t algorithm_values[GENCOLL_OMPI_COLLS][GENCOLL_OMPI_MAX_ALGS + 2];
static char kval_names[GENCOLL_OMPI_COLLS][GENCOLL_OMPI_MAX_ALGS][96];
static char kval_descriptions[GENCOLL_OMPI_COLLS][GENCOLL_OMPI_MAX_ALGS][160];
static char algorithm_names[GENCOLL_OMPI_COLLS][64];
static char algorithm_descriptions[GENCOLL_OMPI_COLLS][512];

static void note_bad(const char *fmt, ...)
{
    char *b = mca_coll_gencoll_component.bad_setting;
    size_t used = strlen(b);
    if (used + 1 >= sizeof(mca_coll_gencoll_component.bad_setting)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + used, sizeof(mca_coll_gencoll_component.bad_setting) - used, fmt, ap);
    va_end(ap);
}

/* The library this component runs in must be the Open MPI its headers came
 * from: the module and request structures are laid out by them. */
static void check_version(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = 0, minor = 0, release = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS) return;
    const char *v = strstr(lib, "Open MPI v");
    if (v == NULL || sscanf(v, "Open MPI v%d.%d.%d", &major, &minor, &release) != 3) return;
    if (major != OMPI_MAJOR_VERSION || minor != OMPI_MINOR_VERSION || release != OMPI_RELEASE_VERSION) {
        note_bad("mca_coll_gencoll was built for Open MPI %d.%d.%d but runs in %d.%d.%d; rebuild gencoll "
                 "against this Open MPI's headers\n",
                 OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION, major, minor, release);
    }
}

/* At MPI_Finalize, after the last communicator: the selection file goes. */
static int gencoll_close(void)
{
    gencoll_selection_free(mca_coll_gencoll_component.file);
    mca_coll_gencoll_component.file = NULL;
    return OMPI_SUCCESS;
}

/* Whether `v` is a plain decimal integer (spaces around it allowed). Open MPI
 * reads an integer parameter with strtoull in base 0 and ignores what
 * follows ("4x" is 4), scales a suffix ("4k" is 4096) and reads a leading 0
 * as octal ("010" is 8): a radix written so is a mistake, not a radix. */
static int plain_integer(const char *v)
{
    const char *p = v;
    while (isspace((unsigned char) *p)) p++;
    if (*p == '+' || *p == '-') p++;
    const char *digits = p;
    while (isdigit((unsigned char) *p)) p++;
    const int decimal = p > digits && (digits[0] != '0' || p == digits + 1);
    while (isspace((unsigned char) *p)) p++;
    return decimal && *p == '\0';
}

/* The text parameter coll_gencoll_NAME (registered as `index`) was given as,
 * where it is not a plain decimal integer, else NULL; `where` gets " (FILE,
 * line N)" for a value from a parameter file, "" otherwise. The value's
 * source decides which text counts: the environment (where mpirun's --mca
 * and OMPI_MCA_ settings reach the ranks) or the file line Open MPI took. */
static const char *malformed_integer(int index, const char *name, char *where, size_t where_size)
{
    where[0] = '\0';
    const mca_base_var_t *var = NULL;
    if (index >= 0 && mca_base_var_get(index, &var) == OPAL_SUCCESS && var != NULL &&
        (var->mbv_source == MCA_BASE_VAR_SOURCE_FILE || var->mbv_source == MCA_BASE_VAR_SOURCE_OVERRIDE)) {
        const mca_base_var_file_value_t *fv = (const mca_base_var_file_value_t *) var->mbv_file_value;
        if (fv == NULL || fv->mbvfv_value == NULL || plain_integer(fv->mbvfv_value)) return NULL;
        snprintf(where, where_size, " (%s, line %d)", fv->mbvfv_file ? fv->mbvfv_file : "a parameter file",
                 fv->mbvfv_lineno);
        return fv->mbvfv_value;
    }
    char env[160];
    snprintf(env, sizeof(env), "OMPI_MCA_coll_gencoll_%s", name);
    const char *v = getenv(env);
    return v == NULL || plain_integer(v) ? NULL : v;
}

static int gencoll_register(void)
{
    mca_base_component_t *c = &mca_coll_gencoll_component.super.collm_version;
    mca_coll_gencoll_component.bad_setting[0] = '\0';
    check_version();

    /* Above tuned (30) and han (35): where a parameter selects a gencoll
     * algorithm, gencoll serves the call; everything else falls through. */
    mca_coll_gencoll_component.priority = 90;
    (void) mca_base_component_var_register(c, "priority", "Priority of the gencoll coll component",
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6,
                                           MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_gencoll_component.priority);
    mca_coll_gencoll_component.verbose = 0;
    (void) mca_base_component_var_register(
        c, "verbose",
        "1: rank 0 prints one line per call gencoll serves (collective, count, bytes, p, root, algorithm, k) "
        "and says which calls it hands back",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gencoll_component.verbose);

    mca_coll_gencoll_component.selection_file = NULL;
    (void) mca_base_component_var_register(
        c, "selection_file",
        "A collective-selection file (the JSON of MPICH's MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, as gencoll-tune "
        "writes it): decides, call by call, the collectives whose coll_gencoll_<coll>_algorithm is auto",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
        &mca_coll_gencoll_component.selection_file);
    if (mca_coll_gencoll_component.file != NULL) {
        gencoll_selection_free(mca_coll_gencoll_component.file);
        mca_coll_gencoll_component.file = NULL;
    }
    const char *path = mca_coll_gencoll_component.selection_file;
    if (path != NULL && path[0] != '\0') {
        char err[400];
        mca_coll_gencoll_component.file = gencoll_selection_load(path, err, sizeof(err));
        if (mca_coll_gencoll_component.file == NULL) note_bad("coll_gencoll_selection_file: %s", err);
    }

    for (int coll = 0; coll < GENCOLL_OMPI_COLLS; coll++) {
        const char *cname = gencoll_mpich_collective_name(coll);
        mca_base_var_enum_value_t *values = algorithm_values[coll];
        int n = 0;
        values[n].value = 0;
        values[n++].string = "auto";
        char *d = algorithm_descriptions[coll];
        size_t dl = sizeof(algorithm_descriptions[coll]);
        /* "...: " then the values, which a refused value's message repeats. */
        const int values_at = snprintf(d, dl, "gencoll algorithm of MPI_%c%s on intracommunicators: ",
                                       cname[0] - 'a' + 'A', cname + 1);
        int w = values_at;
        if (w > 0 && (size_t) w < dl) w += snprintf(d + w, dl - (size_t) w, "auto (Open MPI's own)");
        for (int alg = 0; alg < GENCOLL_OMPI_MAX_ALGS; alg++) {
            if (!gencoll_mpich_supports(coll, alg)) continue;
            const char *aname = gencoll_mpich_algorithm_name(alg);
            values[n].value = alg + 1;
            values[n++].string = aname;
            if (w > 0 && (size_t) w < dl) w += snprintf(d + w, dl - (size_t) w, ", %s", aname);

            mca_coll_gencoll_component.kval[coll][alg] = 2;
            snprintf(kval_names[coll][alg], sizeof(kval_names[coll][alg]), "%s_%s_kval", cname, aname);
            snprintf(kval_descriptions[coll][alg], sizeof(kval_descriptions[coll][alg]),
                     "Radix k of gencoll's %s %s (an integer >= 2; k > p means p)", cname, aname);
            const int kidx =
                mca_base_component_var_register(c, kval_names[coll][alg], kval_descriptions[coll][alg],
                                                MCA_BASE_VAR_TYPE_INT, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE,
                                                OPAL_INFO_LVL_5,
                                                MCA_BASE_VAR_SCOPE_ALL_EQ,
                                                &mca_coll_gencoll_component.kval[coll][alg]);
            const int k = mca_coll_gencoll_component.kval[coll][alg];
            char where[PATH_MAX + 32];
            const char *text = malformed_integer(kidx, kval_names[coll][alg], where, sizeof(where));
            if (text != NULL)
                note_bad("coll_gencoll_%s = \"%s\"%s: the radix k must be an integer >= 2 and <= %d\n",
                         kval_names[coll][alg], text, where, GENCOLL_MAX_RADIX);
            else if (kidx < 0) /* Open MPI refused the value (not an integer, out of its range) and kept 2 */
                note_bad("coll_gencoll_%s: the radix k must be an integer >= 2 and <= %d\n",
                         kval_names[coll][alg], GENCOLL_MAX_RADIX);
            else if (k < 2 || k > GENCOLL_MAX_RADIX)
                note_bad("coll_gencoll_%s = %d: the radix k must be an integer >= 2 and <= %d\n",
                         kval_names[coll][alg], k, GENCOLL_MAX_RADIX);
        }
        values[n].value = 0;
        values[n].string = NULL;

        mca_base_var_enum_t *en = NULL;
        snprintf(algorithm_names[coll], sizeof(algorithm_names[coll]), "%s_algorithm", cname);
        char enum_name[96];
        snprintf(enum_name, sizeof(enum_name), "coll_gencoll_%s_algorithms", cname);
        if (mca_base_var_enum_create(enum_name, values, &en) != OPAL_SUCCESS) return OMPI_ERROR;
        mca_coll_gencoll_component.algorithm[coll] = 0;
        int idx = mca_base_component_var_register(c, algorithm_names[coll], algorithm_descriptions[coll],
                                                  MCA_BASE_VAR_TYPE_INT, en, 0, MCA_BASE_VAR_FLAG_SETTABLE,
                                                  OPAL_INFO_LVL_5,
                                                  MCA_BASE_VAR_SCOPE_ALL_EQ,
                                                  &mca_coll_gencoll_component.algorithm[coll]);
        OBJ_RELEASE(en);
        if (idx < 0) /* Open MPI has printed the value it refused */
            note_bad("coll_gencoll_%s: valid values are %s\n", algorithm_names[coll], d + values_at);
    }
    return OMPI_SUCCESS;
}

int mca_coll_gencoll_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_gencoll_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    if (mca_coll_gencoll_component.bad_setting[0] != '\0') {
        /* Stop the job rather than run with settings it did not ask for.
         * Every rank says why: a setting may be bad on one node only (its
         * parameter file, a selection file missing there), and the rank
         * that aborts first is not necessarily rank 0. */
        if (comm == &ompi_mpi_comm_world.comm) {
            fprintf(stderr, "gencoll (rank %d): %s", ompi_comm_rank(comm),
                    mca_coll_gencoll_component.bad_setting);
            ompi_mpi_abort(comm, 1);
        }
        return NULL;
    }
    if (OMPI_COMM_IS_INTER(comm) || ompi_comm_size(comm) < 2) return NULL;
    int any = mca_coll_gencoll_component.file != NULL;
    for (int coll = 0; coll < GENCOLL_OMPI_COLLS; coll++) any |= mca_coll_gencoll_component.algorithm[coll] != 0;
    if (!any) return NULL;

    mca_coll_gencoll_module_t *m = OBJ_NEW(mca_coll_gencoll_module_t);
    if (m == NULL) return NULL;
    *priority = mca_coll_gencoll_component.priority;
    return &m->super;
}
